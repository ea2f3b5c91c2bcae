// The server's side of `exocortex stdio` beside it, when this process owns the operator's vault: the
// upgraded admin connection is served as the process would serve its own stdin and stdout (the SDK's
// serveStdio: one instance per connection, its era from the first message) and joins the session hub, so
// registry changes reach it. On several processes, a vault owned elsewhere goes through the bridge instead
// (stdio-bridge.ts), which reaches the owner through this process's MCP endpoint.
//
// A relay that half-closes (its client closed stdin) is answered what it is owed before the connection
// ends: the SDK's stdio transport aborts what is in flight when its input ends, so it is given the input's
// end only once every request it read has been answered (or DRAIN_MS passed).
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import {
  serveStdio,
  StdioServerTransport,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type Transport,
  type TransportSendOptions,
} from './sdk.js';
import type { Logger, Principal } from '../../sdk/types.js';
import { createMcpServer, type ServerDeps } from './server-factory.js';
import type { SessionHub } from './sessions.js';

/** How long a half-closed relay waits for answers still owed to it. */
const DRAIN_MS = 30_000;

export interface RelayedOptions {
  readonly operator: Principal;
  readonly deps: ServerDeps;
  readonly hub: SessionHub;
  readonly log: Logger;
}

/** Serve one upgraded relay connection until either end closes. */
export function serveRelayed(socket: Socket, head: Buffer, o: RelayedOptions): void {
  const id = `stdio-relay-${randomUUID()}`;
  const input = new PassThrough();
  const owed = new Set<string | number>();
  let halfClosed = false;
  let deadline: NodeJS.Timeout | undefined;
  const finishIfSettled = () => {
    if (!halfClosed || owed.size > 0 || input.writableEnded) return;
    clearTimeout(deadline);
    input.end();
    socket.end();
  };
  const transport = new AnsweringTransport(new StdioServerTransport(input, socket), owed, finishIfSettled);
  const handle = serveStdio(
    () => {
      const server = createMcpServer(o.operator, o.deps, { notifications: true });
      // The open connection is its liveness: never reaped as idle (lastSeen is always now).
      o.hub.add(id, {
        server,
        credentialId: 'operator',
        get lastSeen() {
          return Date.now();
        },
        set lastSeen(_: number) {},
        close: () => server.close(),
      });
      return server;
    },
    { transport, onerror: (e) => o.log.warn({ err: e.message }, 'stdio relay') },
  );
  if (head.length > 0) input.write(head);
  socket.on('data', (chunk: Buffer) => input.write(chunk));
  const onEnd = () => {
    if (halfClosed) return;
    halfClosed = true;
    deadline = setTimeout(() => {
      owed.clear();
      finishIfSettled();
    }, DRAIN_MS);
    deadline.unref();
    finishIfSettled();
  };
  socket.on('end', onEnd);
  // A relay whose client closed stdin at once may have ended before this reader was attached.
  if (socket.readableEnded) onEnd();
  socket.on('error', () => undefined); // 'close' follows
  socket.on('close', () => {
    clearTimeout(deadline);
    o.hub.delete(id);
    input.destroy();
    void handle.close();
  });
}

/** The SDK's stdio transport, counting the requests it read until each is answered. */
class AnsweringTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  constructor(
    private readonly inner: StdioServerTransport,
    private readonly owed: Set<string | number>,
    private readonly answered: () => void,
  ) {
    inner.onmessage = (message: JSONRPCMessage) => {
      if ('method' in message && 'id' in message) owed.add(message.id);
      this.onmessage?.(message);
    };
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  async send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    await this.inner.send(message);
    const id = 'method' in message || !('id' in message) ? undefined : message.id;
    if (id !== undefined && id !== null && this.owed.delete(id)) this.answered();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
