// `exocortex stdio` beside a running server: the admin connection upgraded into the client's stdio and
// relayed byte for byte. The server reads and answers the messages as the local operator
// (src/host/mcp/stdio-relayed.ts, or stdio-bridge.ts where another process owns the vault); this process
// parses nothing, so it loads neither the MCP SDK nor zod nor the settings schema: a desktop client starts
// it on every launch. serve.ts's runStdio comes here first, and again while it waits for an owner.
import { request } from 'node:http';
import { createConnection, type Socket } from 'node:net';
import { trustedSocket } from '../host/admin/channel-client.js';
import { OperationError } from '../host/admin/errors.js';
import {
  ADMIN_PROTOCOL,
  PID_HEADER,
  PROTOCOL_HEADER,
  STDIO_RELAY_PATH,
  STDIO_UPGRADE,
  VAULT_PATH_HEADER,
} from '../host/admin/protocol.js';

/**
 * Relay stdin and stdout to the server behind `socketPath`, asking for the vault at `vaultPath`. False
 * when nobody answers there (a dead owner's socket file, or none): the caller serves here. True once
 * relaying: the process exits when the relay ends. Throws the server's refusal (another vault, another
 * admin protocol) and an untrusted socket's.
 */
export async function relayStdio(socketPath: string, vaultPath: string): Promise<boolean> {
  if (!trustedSocket(socketPath)) return false;
  const upgraded = await upgrade(socketPath, vaultPath);
  if (!upgraded) return false;
  const { socket, head, pid } = upgraded;
  process.stderr.write(`exocortex: bridging stdio to the running server (PID ${pid}) as the local operator\n`);
  // The client closing stdin half-closes the connection: the server answers what it still owes, then
  // ends its side, and this process exits 0. The server ending first means it went away.
  let inputEnded = false;
  const endInput = () => {
    if (inputEnded) return;
    inputEnded = true;
    socket.end();
  };
  process.stdin.on('end', endInput);
  process.stdin.on('error', endInput);
  process.stdin.pipe(socket, { end: false });
  if (head.length > 0) process.stdout.write(head);
  socket.pipe(process.stdout);
  process.stdout.on('error', () => socket.destroy()); // the client stopped reading
  socket.on('error', () => undefined); // 'close' follows
  socket.on('close', () => {
    if (!inputEnded)
      process.stderr.write(`exocortex: the server behind ${socketPath} went away; restart the client to reconnect\n`);
    process.exit(inputEnded ? 0 : 1);
  });
  return true;
}

/** The upgraded connection, or undefined when nothing listens at the socket. */
function upgrade(
  socketPath: string,
  vaultPath: string,
): Promise<{ socket: Socket; head: Buffer; pid: string } | undefined> {
  return new Promise((resolve, reject) => {
    // Its own connection, not the global agent's: an agent works out a TLS server name from the host header
    // (node:net's isIP, whose first call compiles an IPv6 pattern: ~6 ms of a relay's start).
    const req = request({
      createConnection: () => createConnection(socketPath),
      method: 'GET',
      path: STDIO_RELAY_PATH,
      headers: {
        host: 'exocortex.admin',
        connection: 'Upgrade',
        upgrade: STDIO_UPGRADE,
        [PROTOCOL_HEADER]: String(ADMIN_PROTOCOL),
        [VAULT_PATH_HEADER]: encodeURIComponent(vaultPath),
      },
    });
    req.once('upgrade', (res, socket, head) => resolve({ socket, head, pid: String(res.headers[PID_HEADER] ?? '?') }));
    req.once('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => {
        let error: { code?: string; message?: string; exitCode?: number } = {};
        try {
          error = (JSON.parse(body) as { error?: typeof error }).error ?? {};
        } catch {
          // not JSON: the status says it
        }
        reject(
          new OperationError(
            error.code ?? 'internal',
            error.message ?? `the running server refused the stdio relay (HTTP ${res.statusCode})`,
            error.exitCode ?? 2,
          ),
        );
      });
    });
    req.once('error', (e: NodeJS.ErrnoException) => {
      // Nobody listening: a dead owner's socket. Anything else is a live server that would not upgrade,
      // which only a server of another installation does.
      if (e.code === 'ECONNREFUSED' || e.code === 'ENOENT') return resolve(undefined);
      reject(
        new OperationError(
          'protocol_mismatch',
          `the running server behind ${socketPath} did not accept this CLI's stdio relay (${e.message}): run the CLI of the same installation as the server`,
          2,
        ),
      );
    });
    req.end();
  });
}
