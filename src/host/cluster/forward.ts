// Any process accepts any request: one whose vault another process owns is streamed to that owner over a
// signed hop (hop-signature.ts), which can only narrow what the credential may do; the owner checks the
// credential again. The model and its guarantees: docs/operations.md (several processes) and docs/security.md.
import http from 'node:http';
import { BodyTooLarge, hasBody, readBody, type ReplyView, type RequestView } from '../http/exchange.js';
import { mayWrite, type Scope } from '../../sdk/scopes.js';
import type { Logger, Principal } from '../../sdk/types.js';
import {
  type ForwardMetrics,
  type HopContext,
  NO_OWNER_MESSAGE,
  noOwner,
  rawError,
  sendToOwner,
} from './forward-request.js';
import {
  AS_HEADER,
  CEILING_HEADER,
  CLIENT_HEADER,
  HOP_HEADER,
  HopRefused,
  intersectScopes,
  SIGNATURE_HEADER,
  sign,
  type VerifiedHop,
  verifyHop,
} from './hop-signature.js';
import type { VaultLeases } from './leases.js';
import { commandAtOwner } from './operator-command.js';

export type { ForwardMetrics } from './forward-request.js';
export { HopRefused } from './hop-signature.js';

/** How long a request waits for a vault without a live owner (a failover) before it is refused. */
const OWNER_WAIT_MS = 8000;
const OWNER_POLL_MS = 100;

export interface ForwarderOptions {
  readonly leases: VaultLeases;
  readonly key: Buffer;
  /** This process's own ceiling: the scopes its families and read-only switches allow. */
  readonly ceiling: () => Scope[];
  /** Family names serving on this process (to intersect a hop's ceiling with a credential's scopes). */
  readonly families: () => string[];
  readonly log: Logger;
  readonly metrics?: ForwardMetrics;
  /** The largest request body relayed (server.bodyLimitBytes, as the owner enforces). */
  readonly bodyLimitBytes: number;
  /** The local operator bound to a vault (what a hop from another process's admin channel asserts). */
  readonly operator: (vaultId: number) => Principal;
}

/** How a routed request is checked at the owner: a write needs a write scope in the forwarder's ceiling. */
export interface RouteOptions {
  readonly write: boolean;
  /** The family whose write scope a write needs (else any family's). */
  readonly family?: string;
}

export class Forwarder {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  /** Calls forwarded, and failed hops (for /health and tests). */
  readonly counts = { forwarded: 0, failed: 0, noOwner: 0 };

  /** What each try at the owner uses of this forwarder. */
  private readonly hopContext: HopContext;

  constructor(private readonly o: ForwarderOptions) {
    this.hopContext = {
      agent: this.agent,
      counts: this.counts,
      leases: o.leases,
      log: o.log,
      metrics: o.metrics,
      hopHeaders: (credential, as, client) => this.hopHeaders(credential, as, client),
    };
  }

  /**
   * The principal as this process may serve it: a request that arrived over a valid hop is narrowed to
   * the forwarder's ceiling; an invalid hop throws (the caller refuses it 403).
   */
  narrow(request: RequestView, principal: Principal): Principal {
    const hop = verifyHop(request, this.o.key);
    if (!hop) return principal;
    const families = this.o.families();
    // A forwarder that allows everything here changes nothing (the credential keeps its own scopes).
    if (families.every((f) => mayWrite(hop.scopes, f))) return principal;
    return { ...principal, scopes: intersectScopes(principal.scopes, hop.scopes, families) };
  }

  /**
   * The local operator a verified hop asserts (another process's admin channel forwarded it), or
   * undefined for a request that asserts none; a hop that does not verify throws.
   */
  assertedOperator(request: RequestView): Principal | undefined {
    if (request.headers[AS_HEADER] === undefined) return undefined;
    const vault = verifyHop(request, this.o.key)?.operatorVault;
    if (vault === undefined) throw new HopRefused('an operator assertion without a valid forwarding');
    return this.o.operator(vault);
  }

  /** The client's address: the socket peer's, or on a verified hop the address the forwarder saw. */
  clientAddress(request: RequestView): string {
    try {
      return verifyHop(request, this.o.key)?.client ?? request.ip;
    } catch {
      return request.ip;
    }
  }

  /** Whether this process owns the vault now (a request for it is served here, not forwarded). */
  owns(vaultId: number): boolean {
    return this.o.leases.owns(vaultId);
  }

  /**
   * Route a vault-bound HTTP request (a transfer link, a panel page) whose own credential named `vaultId`:
   * false when this process serves it (it owns the vault, or the hop that brought it verifies and allows
   * it), true when this call answered it (streamed to the owner and back, or refused). A caller that gets
   * true returns without touching the reply.
   */
  async route(request: RequestView, reply: ReplyView, vaultId: number, opts: RouteOptions): Promise<boolean> {
    let hop: VerifiedHop | undefined;
    try {
      hop = verifyHop(request, this.o.key);
    } catch (e) {
      if (!(e instanceof HopRefused)) throw e;
      reply.hijack();
      rawError(reply, 403, `Forbidden: ${e.message}`);
      return true;
    }
    // The forwarding process's own configuration bounds what it may relay: no write through a read-only one.
    if (
      hop &&
      opts.write &&
      !hop.scopes.some((s) => (opts.family ? mayWrite([s], opts.family) : s.endsWith(':write')))
    ) {
      reply.hijack();
      rawError(reply, 403, 'Forbidden: the process this request came through is read-only for it');
      return true;
    }
    return this.forward(request, reply, vaultId, { stream: true });
  }

  /**
   * Forward the request when another process owns the principal's vault: true when this call answered
   * it (forwarded, or refused once no owner appeared in time), false when this process serves it itself.
   * While a vault changes owner (a failover) the request waits for the new one instead of failing.
   */
  async maybeForward(request: RequestView, reply: ReplyView, principal: Principal): Promise<boolean> {
    return this.forward(request, reply, principal.vaultId, {
      stream: false,
      operator: principal.kind === 'operator',
    });
  }

  /**
   * Send a command of this process's admin channel (its JSON body already parsed) to the owner of
   * `vaultId`, as the local operator, and stream the owner's answer back as the channel's NDJSON: true
   * when this call answered it, false when this process owns the vault and runs the command itself.
   */
  async operatorCommand(request: RequestView, reply: ReplyView, vaultId: number, body: unknown): Promise<boolean> {
    const res = reply.raw;
    const write = (line: Record<string, unknown>) => {
      if (!res.headersSent) {
        reply.hijack();
        res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      }
      if (!res.writableEnded) res.write(`${JSON.stringify(line)}\n`);
    };
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    if (!(await this.runOperatorCommand(vaultId, request.url, body, write, gone.signal))) return false;
    res.end();
    return true;
  }

  /**
   * Run an operator command (an admin-channel route the owner's HTTP listener answers for a verified hop
   * asserting its local operator, such as POST /v1/index) at the owner of `vaultId`, handing each line of
   * the owner's NDJSON answer to `onLine` as it arrives (progress, then {done} or {error}): false when
   * this process owns the vault (the caller runs the command itself), else true once an answer ended.
   * Whatever goes wrong on the way (no owner in time, a refused hop, the owner dying) arrives as one
   * {error} line, so a caller always learns how the command ended. The hop carries no credential of a
   * client: the signed operator assertion, bound to this vault, is what the owner checks.
   */
  async runOperatorCommand(
    vaultId: number,
    path: string,
    body: unknown,
    onLine: (line: Record<string, unknown>) => void,
    signal?: AbortSignal,
  ): Promise<boolean> {
    if (this.o.leases.owns(vaultId)) return false;
    const started = performance.now();
    const payload = Buffer.from(JSON.stringify(body ?? {}));
    const answered = await this.atOwner(
      vaultId,
      (base) => commandAtOwner(this.hopContext, base, path, payload, vaultId, started, onLine, signal),
      () => signal?.aborted === true,
    );
    if (answered === 'owned') return false;
    if (answered === 'no_owner') {
      this.counts.noOwner++;
      this.o.metrics?.forwarded((performance.now() - started) / 1000, 'no_owner');
      onLine({ error: { code: 'vault_unavailable', message: NO_OWNER_MESSAGE, exitCode: 1 } });
    }
    return true;
  }

  /**
   * Try `attempt` at the vault's owner, looking the owner up again after each miss (a failover), until
   * it answered or OWNER_WAIT_MS passed ('no_owner'); 'owned' once this process took the vault over.
   */
  private async atOwner(
    vaultId: number,
    attempt: (base: string) => Promise<'done' | 'retry'>,
    gone: () => boolean,
  ): Promise<'done' | 'owned' | 'no_owner'> {
    const deadline = Date.now() + OWNER_WAIT_MS;
    for (let fresh = false; ; fresh = true) {
      if (this.o.leases.owns(vaultId)) return 'owned';
      // The reply may be hijacked: a throw from here on would leave the client waiting for an answer that
      // never comes. An owner lookup that fails (the database is restarting) counts as no owner yet.
      const owner = await this.o.leases.ownerOf(vaultId, fresh).catch(() => undefined);
      if (owner?.url && owner.owner !== this.o.leases.processId && (await attempt(owner.url)) === 'done') return 'done';
      if (Date.now() > deadline || gone()) return 'no_owner';
      await new Promise((r) => setTimeout(r, OWNER_POLL_MS));
    }
  }

  /** The signed headers of a hop from this process (`credential`: what credentialOf gives at the owner). */
  private hopHeaders(credential: string, as: string, client: string): http.OutgoingHttpHeaders {
    const ceiling = `${Date.now()} ${this.o.ceiling().join(' ')}`;
    const headers: http.OutgoingHttpHeaders = { [HOP_HEADER]: this.o.leases.processId, [CEILING_HEADER]: ceiling };
    if (as) headers[AS_HEADER] = as;
    if (client) headers[CLIENT_HEADER] = client;
    headers[SIGNATURE_HEADER] = sign(this.o.key, this.o.leases.processId, ceiling, credential, as, client).toString(
      'base64url',
    );
    return headers;
  }

  private async forward(
    request: RequestView,
    reply: ReplyView,
    vaultId: number,
    opts: { stream: boolean; operator?: boolean },
  ): Promise<boolean> {
    if (this.o.leases.owns(vaultId)) return false;
    const started = performance.now();
    // A request that already crossed one hop is never sent on: ownership moved while it travelled, and
    // the process that forwarded it looks the owner up again.
    if (request.headers[HOP_HEADER] !== undefined) {
      reply.hijack();
      noOwner(reply, true);
      return true;
    }
    reply.hijack();
    // An MCP message is one JSON document, read whole (a lost hop can be sent again); other routes'
    // bodies (an upload) are streamed through as they arrive.
    let body: Buffer | 'stream' | undefined;
    if (opts.stream) body = hasBody(request) ? 'stream' : undefined;
    else
      try {
        body = bodiless(request.method) ? undefined : await readBody(request.raw, this.o.bodyLimitBytes);
      } catch (e) {
        // As the endpoint answers them: over the limit 413, naming the setting; cut short 400.
        reply.raw.setHeader('connection', 'close');
        if (e instanceof BodyTooLarge)
          rawError(reply, 413, `Request body over the limit of ${this.o.bodyLimitBytes} bytes (server.bodyLimitBytes)`);
        else rawError(reply, 400, 'The request body did not arrive whole');
        return true;
      }
    // The client may give up while the request waits for an owner (the request stream itself has ended).
    let gone = false;
    reply.raw.once('close', () => {
      gone = true;
    });
    const answered = await this.atOwner(
      vaultId,
      (base) => sendToOwner(this.hopContext, request, reply, base, body, vaultId, started, opts.operator === true),
      () => gone,
    );
    if (answered === 'done') return true;
    // No owner in time, or this process took the vault over meanwhile: a retry is served right.
    this.counts.noOwner++;
    this.o.metrics?.forwarded((performance.now() - started) / 1000, 'no_owner');
    noOwner(reply);
    return true;
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Methods whose body an MCP hop never carries. */
function bodiless(method: string): boolean {
  return method === 'GET' || method === 'DELETE' || method === 'HEAD';
}
