// Resource subscriptions: which sessions asked to hear about which resource URI, and the
// 'resource-events' service families call to tell them (notifications/resources/updated) — 2025-era
// sessions subscribed here, 2026-07-28 clients on their subscriptions/listen streams. Each session
// holds at most server.maxSubscriptionsPerSession URIs, so one client cannot grow this map without bound.
// Every subscription belongs to the subscriber's vault: an update reaches only sessions of the vault it names.
import type { Server, ServerNotifier } from './sdk.js';
import { Refusal } from '../../sdk/refusals.js';
import type { Logger, ResourceEvents } from '../../sdk/types.js';

export class ResourceSubscriptions implements ResourceEvents {
  private readonly byUri = new Map<string, Set<Server>>();
  private readonly perSession = new Map<Server, number>();
  /** The vault of each subscribed session (a session is bound to one principal, so to one vault). */
  private readonly vaultOf = new Map<Server, number>();
  /** @param maxPerSession server.maxSubscriptionsPerSession: distinct URIs one session may hold. */
  constructor(
    private readonly log: Logger,
    private readonly maxPerSession = 100,
    /** 2026-07-28 listen streams (one bus per vault), which keep their own per-URI filters. */
    private readonly listenBuses: ReadonlyMap<ServerNotifier, number> = new Map(),
  ) {}

  /** Refuses too_many_subscriptions past the per-session cap; re-subscribing to a held URI is free. */
  subscribe(server: Server, uri: string, vaultId: number): void {
    let set = this.byUri.get(uri);
    if (set?.has(server)) return;
    const held = this.perSession.get(server) ?? 0;
    if (held >= this.maxPerSession) throw new Refusal('too_many_subscriptions', { limit: this.maxPerSession });
    if (!set) this.byUri.set(uri, (set = new Set()));
    set.add(server);
    this.perSession.set(server, held + 1);
    this.vaultOf.set(server, vaultId);
  }

  unsubscribe(server: Server, uri: string): void {
    const set = this.byUri.get(uri);
    if (!set?.delete(server)) return;
    if (set.size === 0) this.byUri.delete(uri);
    const held = (this.perSession.get(server) ?? 1) - 1;
    if (held > 0) this.perSession.set(server, held);
    else {
      this.perSession.delete(server);
      this.vaultOf.delete(server);
    }
  }

  /** Forget a closed session everywhere. */
  drop(server: Server): void {
    for (const uri of [...this.byUri.keys()]) this.unsubscribe(server, uri);
  }

  count(): number {
    let n = 0;
    for (const set of this.byUri.values()) n += set.size;
    return n;
  }

  updated(uri: string, vaultId: number): void {
    for (const [bus, busVault] of this.listenBuses) if (busVault === vaultId) bus.resourceUpdated(uri);
    for (const server of this.byUri.get(uri) ?? []) {
      if (this.vaultOf.get(server) !== vaultId) continue;
      server
        .sendResourceUpdated({ uri })
        .catch((e) => this.log.debug({ uri, err: String(e) }, 'resources/updated not delivered'));
    }
  }
}
