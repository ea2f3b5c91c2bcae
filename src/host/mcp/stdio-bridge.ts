// The server's side of `exocortex stdio` beside a running server that does not own the operator's vault
// (several processes on one PostgreSQL; an owned vault is served directly, stdio-relayed.ts): the admin
// connection the relay upgraded (src/cli/stdio-relay.ts) carries the client's stdio, and this bridges its
// JSON-RPC messages to this process's own MCP endpoint on the admin socket, which forwards them to the
// vault's owner as the local operator. The upstream end is the SDK client's
// Streamable HTTP transport (which derives the 2026-07-28 Mcp-Method/Mcp-Name headers from each message it
// relays); the relayed end reads and writes lines with its ReadBuffer and serializeMessage, as the
// server package's stdio transport does.
import {
  isJSONRPCRequest,
  type JSONRPCMessage,
  ReadBuffer,
  serializeMessage,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { Agent } from 'node:http';
import type { Readable, Writable } from 'node:stream';
import type { Logger } from '../../sdk/types.js';
import { ADMIN_MCP_URL, socketFetch } from '../admin/channel-client.js';

/** How often an idle bridge pings the server, so its session is never reaped as abandoned. */
const KEEPALIVE_MS = 5 * 60_000;
/** How long a bridge whose client closed stdin waits for answers still owed to it. */
const DRAIN_MS = 30_000;
const PING_PREFIX = 'exocortex-bridge-ping-';

export interface BridgeOptions {
  /** The relayed client's messages, and where its answers go (the upgraded connection, both ways). */
  readonly input: Readable;
  readonly output: Writable;
  /** This process's admin socket: the bridge is one more MCP client of it. */
  readonly socketPath: string;
  readonly log: Logger;
}

/** Bridge one relayed stdio until either end closes; resolves once the bridge is running. */
export async function bridgeStdio(o: BridgeOptions): Promise<void> {
  const agent = new Agent({ keepAlive: true });
  const upstream = new StreamableHTTPClientTransport(ADMIN_MCP_URL, { fetch: socketFetch(o.socketPath, agent) });
  const local = new StreamLines(o.input, o.output, o.log);
  const initializeIds = new Set<string | number>();
  /** Requests relayed and not yet answered: a client that closes stdin still gets their answers. */
  const inFlight = new Set<string | number>();
  let closing = false;
  // Until initialize is answered there is no session id to send with: everything else waits for it.
  let handshake: Promise<void> = Promise.resolve();
  let handshakeDone = () => {};

  const shutdown = async () => {
    if (closing) return;
    closing = true;
    clearInterval(keepalive);
    await upstream.terminateSession().catch(() => undefined);
    await upstream.close().catch(() => undefined);
    agent.destroy();
    local.end();
  };

  local.onmessage = (message: JSONRPCMessage) => {
    const isInitialize = isJSONRPCRequest(message) && message.method === 'initialize';
    if (isJSONRPCRequest(message)) {
      inFlight.add(message.id);
      if (isInitialize) initializeIds.add(message.id);
    }
    const ready = isInitialize ? Promise.resolve() : handshake;
    if (isInitialize) handshake = new Promise((resolve) => (handshakeDone = resolve));
    ready
      .then(() => upstream.send(message))
      .catch((e: Error) => {
        if (isInitialize) handshakeDone();
        if (!isJSONRPCRequest(message)) return;
        inFlight.delete(message.id);
        void local.send({
          jsonrpc: '2.0',
          id: message.id,
          error: { code: -32603, message: `the Exocortex server did not answer: ${e.message}` },
        });
      });
  };
  upstream.onmessage = (message: JSONRPCMessage) => {
    const id = 'id' in message ? message.id : undefined;
    if (typeof id === 'string' && id.startsWith(PING_PREFIX)) return; // our keepalive, not the client's
    if (id !== undefined) inFlight.delete(id);
    if (id !== undefined && initializeIds.delete(id)) {
      const version =
        'result' in message ? (message.result as { protocolVersion?: string }).protocolVersion : undefined;
      if (version) upstream.setProtocolVersion(version);
      handshakeDone();
    }
    void local.send(message);
  };
  upstream.onerror = (e) => o.log.warn({ err: e.message }, 'stdio relay: upstream');
  // The relay half-closed (its client closed stdin): answer what is owed, then end our side.
  let draining = false;
  local.onend = () => {
    if (draining) return;
    draining = true;
    const deadline = Date.now() + DRAIN_MS;
    const wait = () => (inFlight.size === 0 || Date.now() > deadline ? void shutdown() : setTimeout(wait, 20));
    wait();
  };
  local.onclose = () => void shutdown();

  let pings = 0;
  const keepalive = setInterval(() => {
    if (upstream.sessionId)
      void upstream.send({ jsonrpc: '2.0', id: `${PING_PREFIX}${++pings}`, method: 'ping' }).catch(() => undefined);
  }, KEEPALIVE_MS);
  keepalive.unref();

  await upstream.start();
  local.start();
}

/**
 * The relayed end: JSON-RPC messages, one per line, both ways on the upgraded connection. A line that is not
 * JSON-RPC is logged and skipped; a line over the read buffer's bound ends the connection.
 */
class StreamLines {
  onmessage: (message: JSONRPCMessage) => void = () => {};
  /** The relay half-closed: nothing more will come, answers may still go. */
  onend: () => void = () => {};
  /** The connection is gone both ways. */
  onclose: () => void = () => {};
  private readonly buffer = new ReadBuffer();
  private closed = false;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.input.on('data', (chunk: Buffer) => {
      try {
        this.buffer.append(chunk);
      } catch (e) {
        this.log.warn({ err: (e as Error).message }, 'stdio relay: input refused');
        this.output.destroy();
        return;
      }
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.buffer.readMessage();
        } catch (e) {
          this.log.warn({ err: (e as Error).message }, 'stdio relay: a line that is not JSON-RPC');
          continue;
        }
        if (message === null) break;
        this.onmessage(message);
      }
    });
    this.input.on('end', () => this.onend());
    // A relay whose client closed stdin at once may have ended before this reader was attached.
    if (this.input.readableEnded) setImmediate(() => this.onend());
    this.input.on('error', () => undefined); // 'close' follows
    this.input.on('close', () => {
      this.closed = true;
      this.onclose();
    });
    this.output.on('error', () => undefined);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed || this.output.writableEnded) return Promise.resolve();
    return new Promise((resolve) => {
      if (this.output.write(serializeMessage(message))) resolve();
      else this.output.once('drain', resolve);
    });
  }

  end(): void {
    if (!this.output.writableEnded) this.output.end();
  }
}
