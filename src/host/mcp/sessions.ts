// Connected MCP sessions (2025-era HTTP sessions and stdio) and the 2026-07-28 handler's listen bus:
// kept so registry changes reach every client as list_changed notifications, in both eras, and so idle
// HTTP sessions can be reaped.
import type { Server, ServerNotifier } from './sdk.js';
import type { RegistryChange } from '../families/registry.js';
import type { Logger } from '../../sdk/types.js';

export interface LiveSession {
  readonly server: Server;
  /** The session's HTTP transport (absent for stdio). */
  readonly transport?: unknown;
  readonly credentialId: string;
  /** The user the credential belongs to (per-user session caps). */
  readonly user?: string;
  /** The vault the session's principal is bound to (absent for stdio, which serves the one vault). */
  readonly vaultId?: number;
  lastSeen: number;
  /** Requests being answered on this session now (a session with one is never evicted). */
  inFlight?: number;
  close(): Promise<void>;
}

export class SessionHub {
  private readonly sessions = new Map<string, LiveSession>();
  /** Open 2026-07-28 subscriptions/listen responses by credential, so disabling a user ends them too. */
  private readonly streams = new Map<string, Set<{ destroy(): void }>>();
  /** The user of each open listen stream (per-user caps count streams with sessions). */
  private readonly streamUsers = new Map<{ destroy(): void }, string>();
  /** The vault of each open listen stream (ended when this process stops owning the vault). */
  private readonly streamVaults = new Map<{ destroy(): void }, number>();
  /** Open sessions one user may hold (0: no per-user cap); the host sets it from the users' limits. */
  sessionsPerUser: (user: string) => number = () => 0;
  /** Publishers onto open subscriptions/listen streams (one per 2026-07-28 HTTP handler and vault), by vault id. */
  readonly listenBuses = new Map<ServerNotifier, number>();
  constructor(private readonly log: Logger) {}

  addListenBus(bus: ServerNotifier, vaultId: number): void {
    this.listenBuses.set(bus, vaultId);
  }

  add(id: string, session: LiveSession): void {
    this.sessions.set(id, session);
  }

  get(id: string): LiveSession | undefined {
    return this.sessions.get(id);
  }

  delete(id: string): void {
    this.sessions.delete(id);
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Open subscriptions/listen streams. */
  get streamCount(): number {
    let n = 0;
    for (const set of this.streams.values()) n += set.size;
    return n;
  }

  /**
   * Connections the credentials of one user hold: sessions and listen streams alike, so the per-user cap
   * (the user's sessions limit) bounds both with one count.
   */
  countForUser(user: string): number {
    let n = 0;
    for (const s of this.sessions.values()) if (s.user === user) n++;
    for (const u of this.streamUsers.values()) if (u === user) n++;
    return n;
  }

  /** Hold a long-lived response (a listen stream) under its credential and user until it closes. */
  trackStream(
    credentialId: string,
    stream: { destroy(): void; once(event: 'close', f: () => void): unknown },
    user?: string,
    vaultId?: number,
  ): void {
    let set = this.streams.get(credentialId);
    if (!set) this.streams.set(credentialId, (set = new Set()));
    set.add(stream);
    if (user !== undefined) this.streamUsers.set(stream, user);
    if (vaultId !== undefined) this.streamVaults.set(stream, vaultId);
    stream.once('close', () => {
      set.delete(stream);
      this.streamUsers.delete(stream);
      this.streamVaults.delete(stream);
      if (set.size === 0 && this.streams.get(credentialId) === set) this.streams.delete(credentialId);
    });
  }

  /**
   * Connections one credential holds: sessions and listen streams alike, so
   * server.maxSessionsPerCredential bounds both with one count (a read-only key cannot take every stream).
   */
  countFor(credentialId: string): number {
    let n = this.streams.get(credentialId)?.size ?? 0;
    for (const s of this.sessions.values()) if (s.credentialId === credentialId) n++;
    return n;
  }

  /**
   * Make room for one more session: close the least recently used session with no request in flight,
   * among `credentialId`'s own (or, when undefined, among those of the credential holding the most).
   * False when every candidate is busy.
   */
  async evictIdle(credentialId?: string, user?: string): Promise<boolean> {
    let owner = credentialId;
    if (owner === undefined) {
      const counts = new Map<string, number>();
      for (const s of this.sessions.values()) counts.set(s.credentialId, (counts.get(s.credentialId) ?? 0) + 1);
      let most = 0;
      for (const [id, n] of counts) if (n > most) [owner, most] = [id, n];
    }
    let victim: [string, LiveSession] | undefined;
    for (const entry of this.sessions) {
      const s = entry[1];
      if ((user !== undefined ? s.user !== user : s.credentialId !== owner) || (s.inFlight ?? 0) > 0) continue;
      if (!victim || s.lastSeen < victim[1].lastSeen) victim = entry;
    }
    if (!victim) return false;
    this.sessions.delete(victim[0]);
    this.log.info({ session: victim[0], credential: victim[1].credentialId }, 'idle session closed to make room');
    await victim[1].close().catch(() => undefined);
    return true;
  }

  broadcast(change: RegistryChange): void {
    for (const bus of this.listenBuses.keys()) {
      if (change.tools) bus.toolsChanged();
      if (change.prompts) bus.promptsChanged();
      if (change.resources) bus.resourcesChanged();
    }
    for (const [id, s] of this.sessions) {
      const sends: Array<Promise<void>> = [];
      if (change.tools) sends.push(s.server.sendToolListChanged());
      if (change.prompts) sends.push(s.server.sendPromptListChanged());
      if (change.resources) sends.push(s.server.sendResourceListChanged());
      Promise.all(sends).catch((e) => this.log.debug({ session: id, err: String(e) }, 'list_changed not delivered'));
    }
  }

  /** Close every session and listen stream opened by these credentials (their user was disabled). */
  async closeFor(credentialIds: ReadonlySet<string>): Promise<number> {
    const victims = [...this.sessions].filter(([, s]) => credentialIds.has(s.credentialId));
    for (const [id] of victims) this.sessions.delete(id);
    let streams = 0;
    for (const id of credentialIds) {
      for (const stream of this.streams.get(id) ?? []) {
        stream.destroy();
        streams++;
      }
      this.streams.delete(id);
    }
    if (streams) this.log.info({ streams }, 'listen streams of disabled credentials closed');
    await Promise.all(victims.map(([, s]) => s.close().catch(() => undefined)));
    return victims.length + streams;
  }

  /**
   * Close every session and listen stream of a vault this process stopped owning (cluster failover):
   * its changes are now recorded and announced by another process, so a stream left open here would
   * go silent. Clients see their stream end, reconnect (reaching the new owner) and resume from their
   * cursor.
   */
  async closeVault(vaultId: number): Promise<number> {
    const victims = [...this.sessions].filter(([, s]) => s.vaultId === vaultId);
    for (const [id] of victims) this.sessions.delete(id);
    let streams = 0;
    for (const [stream, v] of [...this.streamVaults]) {
      if (v !== vaultId) continue;
      stream.destroy();
      streams++;
    }
    if (victims.length + streams)
      this.log.info(
        { vault: vaultId, sessions: victims.length, streams },
        'sessions and listen streams of a vault no longer owned here closed',
      );
    await Promise.all(victims.map(([, s]) => s.close().catch(() => undefined)));
    return victims.length + streams;
  }

  /** Close sessions idle for longer than maxIdleMs. */
  async reap(maxIdleMs: number, now = Date.now()): Promise<number> {
    let n = 0;
    for (const [id, s] of this.sessions) {
      if (now - s.lastSeen > maxIdleMs) {
        this.sessions.delete(id);
        await s.close().catch(() => undefined);
        n++;
      }
    }
    return n;
  }

  async closeAll(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => s.close().catch(() => undefined)));
  }
}
