// Resource subscriptions: which sessions asked to hear about which resource URI, and the
// 'resource-events' service families call to tell them (notifications/resources/updated).
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Logger, ResourceEvents } from '../../sdk/types.js';

export class ResourceSubscriptions implements ResourceEvents {
  private readonly byUri = new Map<string, Set<Server>>();
  constructor(private readonly log: Logger) {}

  subscribe(server: Server, uri: string): void {
    let set = this.byUri.get(uri);
    if (!set) this.byUri.set(uri, (set = new Set()));
    set.add(server);
  }

  unsubscribe(server: Server, uri: string): void {
    const set = this.byUri.get(uri);
    set?.delete(server);
    if (set && set.size === 0) this.byUri.delete(uri);
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

  updated(uri: string): void {
    for (const server of this.byUri.get(uri) ?? []) {
      server.sendResourceUpdated({ uri }).catch((e) => this.log.debug({ uri, err: String(e) }, 'resources/updated not delivered'));
    }
  }
}
