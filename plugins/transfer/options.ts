// What createTransferFamily can be given in code (never from config): the DNS resolver, the socket
// connector, the clock, and the test-only loopback opt-in. Defaults are the real system ones.
import { systemConnector, systemResolver, type Connector, type Resolver } from '../../src/sdk/index.js';

export interface TransferOptions {
  /** DNS resolution for import_from_url (default: the system resolver, every answer). */
  readonly resolver?: Resolver;
  /** Opens the socket to a vetted address (default: node net/tls). */
  readonly connector?: Connector;
  /** The one clock for mint, claim, deadlines and expiry (default: Date.now). */
  readonly clock?: () => number;
  /** TEST ONLY: let imports reach 127.0.0.1 / ::1 (a loopback HTTPS fixture). Never set in production. */
  readonly unsafeAllowLoopbackForTests?: boolean;
}

export interface TransferDeps {
  readonly resolver: Resolver;
  readonly connector: Connector;
  readonly now: () => Date;
  readonly allowLoopback: boolean;
}

export function resolveOptions(o: TransferOptions = {}): TransferDeps {
  const clock = o.clock ?? Date.now;
  return {
    resolver: o.resolver ?? systemResolver,
    connector: o.connector ?? systemConnector(),
    now: () => new Date(clock()),
    allowLoopback: o.unsafeAllowLoopbackForTests === true,
  };
}
