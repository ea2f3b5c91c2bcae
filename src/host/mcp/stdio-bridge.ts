// `exocortex stdio` beside a running server: relays every JSON-RPC message between the local client on
// stdin/stdout and the server's MCP endpoint on its admin socket, where it runs as the local operator.
// Never opens the database and loads only the SDK's client package: the upstream end is its Streamable HTTP
// transport (which derives the 2026-07-28 Mcp-Method/Mcp-Name headers from each message it relays), the
// local end reads and writes lines with its ReadBuffer and serializeMessage, as the server package's stdio
// transport does (that package would load a second copy of the SDK's core for nothing).
import {
  isJSONRPCRequest,
  type JSONRPCMessage,
  ReadBuffer,
  serializeMessage,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { realpathSync } from 'node:fs';
import type { AdminClient } from '../admin/channel-client.js';
import type { Hello } from '../admin/protocol.js';

/**
 * Why this stdio must not be bridged to the running server: it was asked for the vault at `wanted`
 * (vault.path / EXO_VAULT_PATH) and the server serves another. Undefined when they are one folder (or
 * the server is too old to say).
 */
export function vaultMismatch(wanted: string, hello: Hello): string | undefined {
  if (!hello.vaultPath) return undefined;
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  if (real(wanted) === real(hello.vaultPath)) return undefined;
  return `the running server (PID ${hello.pid}) serves the vault at ${hello.vaultPath}, but this stdio was asked for the vault at ${wanted} (vault.path or EXO_VAULT_PATH); refusing to relay to the wrong vault. Use the same config as the server, or give this one its own database (database.url) so it is not the same server's`;
}

/** How often an idle bridge pings the server, so its session is never reaped as abandoned. */
const KEEPALIVE_MS = 5 * 60_000;
/** How long a bridge whose client closed stdin waits for answers still owed to it. */
const DRAIN_MS = 30_000;
const PING_PREFIX = 'exocortex-bridge-ping-';

export async function runStdioBridge(owner: AdminClient): Promise<void> {
  const upstream = new StreamableHTTPClientTransport(owner.mcpUrl, { fetch: owner.fetch });
  const local = new StdioLines();
  const initializeIds = new Set<string | number>();
  /** Requests relayed and not yet answered: a client that closes stdin still gets their answers. */
  const inFlight = new Set<string | number>();
  let closing = false;
  // Until initialize is answered there is no session id to send with: everything else waits for it.
  let handshake: Promise<void> = Promise.resolve();
  let handshakeDone = () => {};

  const shutdown = async (code: number, why?: string) => {
    if (closing) return;
    closing = true;
    if (why) process.stderr.write(`exocortex: ${why}\n`);
    await upstream.terminateSession().catch(() => undefined);
    await upstream.close().catch(() => undefined);
    await owner.close();
    process.exit(code);
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
        if (isJSONRPCRequest(message)) inFlight.delete(message.id);
        if (isJSONRPCRequest(message)) {
          void local.send({
            jsonrpc: '2.0',
            id: message.id,
            error: { code: -32603, message: `the Exocortex server did not answer: ${e.message}` },
          });
        }
        if (
          /ECONNREFUSED|ENOENT|ECONNRESET|socket hang up|other side closed|fetch failed/i.test(
            String(e.message) + String((e as { cause?: unknown }).cause),
          )
        ) {
          void shutdown(1, `the server behind ${owner.socketPath} went away; restart the client to reconnect`);
        }
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
  upstream.onerror = (e) => process.stderr.write(`exocortex: bridge: ${e.message}\n`);
  local.onclose = () => void shutdown(0);
  let draining = false;
  const drain = () => {
    if (draining) return;
    draining = true;
    const deadline = Date.now() + DRAIN_MS;
    const wait = () => (inFlight.size === 0 || Date.now() > deadline ? void shutdown(0) : setTimeout(wait, 20));
    wait();
  };
  process.stdin.on('end', drain);
  process.stdin.on('close', drain);
  process.stdin.on('error', drain);

  let pings = 0;
  const keepalive = setInterval(() => {
    if (upstream.sessionId)
      void upstream.send({ jsonrpc: '2.0', id: `${PING_PREFIX}${++pings}`, method: 'ping' }).catch(() => undefined);
  }, KEEPALIVE_MS);
  keepalive.unref();

  await upstream.start();
  await local.start();
  process.stderr.write(
    `exocortex: bridging stdio to the running server (PID ${owner.hello.pid}) as the local operator\n`,
  );
}

/**
 * The local end: JSON-RPC messages, one per line, from stdin and to stdout (stdin's end is handled by the
 * bridge, which drains what it owes before it exits). A line that is not JSON-RPC is reported and skipped.
 */
class StdioLines {
  onmessage: (message: JSONRPCMessage) => void = () => {};
  onclose: () => void = () => {};
  private readonly buffer = new ReadBuffer();
  private closed = false;

  async start(): Promise<void> {
    process.stdin.on('data', (chunk: Buffer) => {
      try {
        this.buffer.append(chunk);
      } catch (e) {
        process.stderr.write(`exocortex: bridge: ${(e as Error).message}\n`);
        return this.close();
      }
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.buffer.readMessage();
        } catch (e) {
          process.stderr.write(`exocortex: bridge: ${(e as Error).message}\n`);
          continue;
        }
        if (message === null) break;
        this.onmessage(message);
      }
    });
    process.stdout.on('error', () => this.close());
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      if (process.stdout.write(serializeMessage(message))) resolve();
      else process.stdout.once('drain', resolve);
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    process.stdin.pause();
    this.onclose();
  }
}
