// The admin channel: a Unix domain socket (mode 0600, in the database's own directory) on which the
// process that owns the database carries out operator commands for the CLI and serves MCP to the stdio
// bridge as the local operator. Reachable only through the filesystem by the owner's user; never on TCP.
import { chmodSync, lstatSync, realpathSync, unlinkSync } from 'node:fs';
import http, { type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { Logger, Principal } from '../../sdk/types.js';
import type { Scope } from '../../sdk/scopes.js';
import { HopRefused, type Forwarder } from '../cluster/forward.js';
import { jsonRpcError, mcpHttpEndpoint, type McpHttpEndpoint } from '../mcp/http-transport.js';
import type { ServerDeps } from '../mcp/server-factory.js';
import type { SessionHub } from '../mcp/sessions.js';
import {
  ADMIN_PROTOCOL,
  type Hello,
  PID_HEADER,
  PROTOCOL_HEADER,
  STDIO_RELAY_PATH,
  STDIO_UPGRADE,
  VAULT_PATH_HEADER,
} from './protocol.js';
import { PACKAGE_VERSION } from '../package-info.js';
import {
  usersAddOp,
  usersAdminOp,
  usersDisableOp,
  usersLimitsOp,
  usersListOp,
  vaultsAddOp,
  vaultsListOp,
  vaultsRemoveOp,
} from './account-operations.js';
import {
  oauthClientsListOp,
  oauthClientsRevokeOp,
  oauthGrantsListOp,
  oauthGrantsRevokeOp,
  usersLoginLinkOp,
  usersPasswdOp,
} from './oauth-operations.js';
import {
  familyCommandOp,
  indexOp,
  keysCreateOp,
  keysListOp,
  keysRevokeOp,
  OperationError,
  type OperationTarget,
} from './operations.js';

export interface AdminChannelOptions {
  readonly socketPath: string;
  /** Read per command, so a reloaded configuration applies to the next one. */
  readonly target: () => OperationTarget;
  readonly hub: SessionHub;
  readonly deps: ServerDeps;
  readonly operator: Principal;
  readonly log: Logger;
  readonly maxSessions: number;
  readonly command: string;
  readonly health: () => Promise<Record<string, unknown>>;
  /** The same body limit as the HTTP server's, so a bridged client can send what a remote one can. */
  readonly bodyLimitBytes: number;
  /** Several processes on one PostgreSQL server: the operator's calls go to their vault's owner. */
  readonly forwarder?: Forwarder;
}

export interface AdminChannel {
  readonly socketPath: string;
  close(): Promise<void>;
}

/** Bind the socket. The caller holds the database lock, so a socket file left here is a dead owner's. */
export async function openAdminChannel(o: AdminChannelOptions): Promise<AdminChannel> {
  // MCP for the stdio bridges answers on node's request path, ahead of Fastify's (made below).
  let mcp: McpHttpEndpoint | undefined;
  const app = Fastify({
    logger: false,
    bodyLimit: o.bodyLimitBytes,
    serverFactory: (handler) =>
      http.createServer((req, res) => (mcp?.claims(req) ? mcp.serve(req, res) : handler(req, res))),
  });
  const startedAt = new Date().toISOString();
  const hello: Hello = {
    protocol: ADMIN_PROTOCOL,
    version: PACKAGE_VERSION,
    pid: process.pid,
    command: o.command,
    startedAt,
    vault: o.target().vault.name,
    vaultPath: o.target().vault.fs.root,
  };

  app.setErrorHandler((error: Error & { statusCode?: number }, _request, reply) => {
    if (error instanceof OperationError)
      return reply
        .code(error.code === 'not_found' || error.code === 'unknown_user' || error.code === 'unknown_vault' ? 404 : 400)
        .send({ error: { code: error.code, message: error.message, exitCode: error.exitCode } });
    o.log.error({ err: error.stack ?? error.message }, 'admin command failed');
    return reply
      .code(error.statusCode ?? 500)
      .send({ error: { code: 'internal', message: error.message, exitCode: 1 } });
  });
  app.addHook('onRequest', async (request, reply) => {
    if (request.url.startsWith('/mcp') || request.url === '/v1/hello') return;
    const refused = protocolRefusal(request.headers[PROTOCOL_HEADER]);
    if (refused) return reply.code(426).send(refused);
  });
  const protocolRefusal = (asked: string | string[] | undefined) =>
    Number(asked) === ADMIN_PROTOCOL
      ? undefined
      : {
          error: {
            code: 'protocol_mismatch',
            message: `this server speaks admin protocol ${ADMIN_PROTOCOL} (exocortex ${hello.version}); the CLI spoke ${asked ?? 'none'}: run the CLI of the same installation as the server`,
            exitCode: 2,
          },
        };

  // `exocortex stdio` relays: the connection upgraded, then served as the local operator (see below).
  const relays = new Set<Socket>();
  app.server.on('upgrade', (request: IncomingMessage, socket: Socket, head: Buffer) => {
    const refuse = (status: string, body: object) =>
      socket.end(
        `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n${JSON.stringify(body)}`,
      );
    if (request.url !== STDIO_RELAY_PATH || request.headers.upgrade !== STDIO_UPGRADE)
      return refuse('404 Not Found', { error: { code: 'not_found', message: 'no such admin route', exitCode: 1 } });
    const refused = protocolRefusal(request.headers[PROTOCOL_HEADER]);
    if (refused) return refuse('426 Upgrade Required', refused);
    const asked = request.headers[VAULT_PATH_HEADER];
    let wanted: string | undefined;
    try {
      wanted = typeof asked === 'string' ? decodeURIComponent(asked) : undefined;
    } catch {
      wanted = undefined;
    }
    if (wanted === undefined)
      return refuse('400 Bad Request', {
        error: { code: 'bad_request', message: `the relay named no vault (${VAULT_PATH_HEADER})`, exitCode: 2 },
      });
    // Relaying to a server that serves another vault would answer from the wrong notes, silently.
    const mismatch = vaultMismatch(wanted, hello.vaultPath ?? wanted);
    if (mismatch) return refuse('409 Conflict', { error: { code: 'vault_mismatch', message: mismatch, exitCode: 2 } });
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nupgrade: ${STDIO_UPGRADE}\r\nconnection: Upgrade\r\n${PID_HEADER}: ${process.pid}\r\n\r\n`,
    );
    relays.add(socket);
    socket.once('close', () => relays.delete(socket));
    // Held until the relay's reader is attached: the relay may send, or end, before its module has loaded.
    socket.pause();
    // Served here when this process owns the operator's vault; else bridged through this socket's own MCP
    // endpoint, which forwards to the vault's owner.
    const served =
      !o.forwarder || o.forwarder.owns(o.operator.vaultId)
        ? import('../mcp/stdio-relayed.js').then(({ serveRelayed }) =>
            serveRelayed(socket, head, { operator: o.operator, deps: o.deps, hub: o.hub, log: o.log }),
          )
        : import('../mcp/stdio-bridge.js').then(({ bridgeStdio }) => {
            if (head.length > 0) socket.unshift(head);
            return bridgeStdio({ input: socket, output: socket, socketPath: o.socketPath, log: o.log });
          });
    served.then(
      () => socket.resume(),
      (e: Error) => {
        o.log.error({ err: e.stack ?? e.message }, 'stdio relay failed');
        socket.destroy();
      },
    );
  });

  app.get('/v1/hello', async () => hello);
  app.get('/v1/health', async () => o.health());
  app.get('/v1/keys', async () => ({ keys: await keysListOp(o.target()) }));
  app.get('/v1/users', async () => ({ users: await usersListOp(o.target()) }));
  app.post<{ Body: { name: string; vault: string; admin?: boolean; share?: boolean } }>(
    '/v1/users',
    async (request) => ({ user: await usersAddOp(o.target(), request.body ?? ({} as never)) }),
  );
  app.post<{ Body: { name: string; admin: boolean } }>('/v1/users/admin', async (request) => ({
    user: await usersAdminOp(o.target(), {
      name: String(request.body?.name ?? ''),
      admin: request.body?.admin === true,
    }),
  }));
  app.post<{ Body: { name: string } }>('/v1/users/disable', async (request) =>
    usersDisableOp(o.target(), String(request.body?.name ?? '')),
  );
  app.post<{ Body: { name: string; limits?: unknown; clear?: boolean } }>('/v1/users/limits', async (request) => ({
    user: await usersLimitsOp(o.target(), request.body ?? ({} as never)),
  }));
  app.post<{ Body: { name: string; password: string } }>('/v1/users/passwd', async (request) =>
    usersPasswdOp(o.target(), request.body ?? ({} as never)),
  );
  app.post<{ Body: { name: string } }>('/v1/users/login-link', async (request) =>
    usersLoginLinkOp(o.target(), String(request.body?.name ?? '')),
  );
  app.get('/v1/oauth/clients', async () => ({ clients: await oauthClientsListOp(o.target()) }));
  app.post<{ Body: { id: string } }>('/v1/oauth/clients/revoke', async (request) =>
    oauthClientsRevokeOp(o.target(), String(request.body?.id ?? '')),
  );
  app.get('/v1/oauth/grants', async () => ({ grants: await oauthGrantsListOp(o.target()) }));
  app.post<{ Body: { id: string } }>('/v1/oauth/grants/revoke', async (request) =>
    oauthGrantsRevokeOp(o.target(), String(request.body?.id ?? '')),
  );
  app.get('/v1/vaults', async () => ({ vaults: await vaultsListOp(o.target()) }));
  app.post<{ Body: { name: string; root: string; shared?: boolean } }>('/v1/vaults', async (request) => ({
    vault: await vaultsAddOp(o.target(), request.body ?? ({} as never)),
  }));
  app.post<{ Body: { name: string; force?: boolean } }>('/v1/vaults/remove', async (request) =>
    vaultsRemoveOp(o.target(), String(request.body?.name ?? ''), request.body?.force === true),
  );
  app.post<{ Body: { name: string; scope: Scope; expires?: string; user?: string } }>('/v1/keys', async (request) =>
    keysCreateOp(o.target(), request.body ?? ({} as never)),
  );
  app.post<{ Body: { which: string } }>('/v1/keys/revoke', async (request) =>
    keysRevokeOp(o.target(), String(request.body?.which ?? '')),
  );
  app.post<{ Body: { rebuild?: boolean; vault?: string } }>('/v1/index', async (request, reply) => {
    const vault = typeof request.body?.vault === 'string' ? request.body.vault : undefined;
    // Several processes: a vault this process does not index goes to its owner, whose answer streams back.
    if (o.forwarder) {
      const id = await indexedElsewhere(o.target(), vault);
      if (id !== undefined && (await o.forwarder.operatorCommand(request, reply, id, request.body))) return reply;
    }
    return stream(reply, async (send) => ({
      summary: await indexOp(
        o.target(),
        { rebuild: request.body?.rebuild === true, ...(vault !== undefined ? { vault } : {}) },
        (p) => send({ progress: p }),
      ),
    }));
  });
  app.post<{ Body: { family: string; command?: string; args?: string[] } }>('/v1/family', async (request, reply) =>
    stream(reply, async (send) => {
      const b = request.body ?? ({} as { family: string });
      const exitCode = await familyCommandOp(
        o.target(),
        String(b.family),
        b.command,
        (b.args ?? []).map(String),
        (line) => send({ line }),
      );
      return { exitCode };
    }),
  );

  // MCP for `exocortex stdio` bridges, always the operator: 2025 clients get sessions (so list_changed
  // reaches them), 2026-07-28 ones subscriptions/listen.
  mcp = mcpHttpEndpoint({
    mode: 'stateful',
    maxSessions: o.maxSessions,
    maxSessionsPerCredential: o.maxSessions,
    maxListenStreams: o.maxSessions,
    bodyLimitBytes: o.bodyLimitBytes,
    verifier: { verify: async () => o.operator },
    hub: o.hub,
    deps: o.deps,
    log: o.log,
    isAllowedHost: () => true,
    isAllowedOrigin: (origin) => origin === undefined,
    forwarder: o.forwarder,
  });
  app.setNotFoundHandler((_request, reply) => jsonRpcError(reply, 404, -32601, 'no such admin route'));

  await removeStaleSocket(o.socketPath);
  await app.ready();
  const previous = process.umask(0o177); // the socket is born 0600: no window in which others may connect
  try {
    await app.listen({ path: o.socketPath });
  } finally {
    process.umask(previous);
  }
  chmodSync(o.socketPath, 0o600);
  return {
    socketPath: o.socketPath,
    async close() {
      for (const socket of relays) socket.destroy();
      await app.close().catch(() => undefined);
      try {
        unlinkSync(o.socketPath);
      } catch {
        // already gone
      }
    },
  };
}

/** A socket file nobody answers on is a dead owner's and goes; one that answers belongs to a live process. */
async function removeStaleSocket(socketPath: string): Promise<void> {
  let st;
  try {
    st = lstatSync(socketPath);
  } catch {
    return;
  }
  if (!st.isSocket())
    throw new Error(`${socketPath} exists and is not a socket; remove it (the admin channel needs that path)`);
  const alive = await new Promise<boolean>((resolve) => {
    const probe = connect(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (alive)
    throw new Error(
      `another process answers on the admin socket ${socketPath}; stop it or set admin.socketPath to another path`,
    );
  unlinkSync(socketPath);
}

/** The id of the vault `name` (the process's own when absent) when its index does not run here. */
async function indexedElsewhere(t: OperationTarget, name: string | undefined): Promise<number | undefined> {
  if (name === undefined || name === t.vault.name) return t.index ? undefined : t.vault.id;
  if (t.vaults?.all().some((v) => v.row.name === name && v.index)) return undefined;
  const row = await t.db.selectFrom('vaults').select('id').where('name', '=', name).executeTakeFirst();
  return row?.id as number | undefined;
}

/**
 * The owner's side of `exocortex index` run at another process (several processes on one PostgreSQL):
 * POST /v1/index on the HTTP listener, answered only for a verified hop asserting the local operator of
 * that process's admin channel (signed with the cluster's hop key); anything else finds no such route.
 */
export function registerForwardedIndex(
  app: FastifyInstance,
  o: { readonly forwarder: Forwarder; readonly target: () => OperationTarget },
): void {
  app.post<{ Body: { rebuild?: boolean } }>('/v1/index', async (request, reply) => {
    let operator: Principal | undefined;
    try {
      operator = o.forwarder.assertedOperator(request);
    } catch (e) {
      if (!(e instanceof HopRefused)) throw e;
      return reply.code(403).send({ error: { code: 'forbidden', message: `Forbidden: ${e.message}`, exitCode: 1 } });
    }
    if (!operator) return jsonRpcError(reply, 404, -32601, 'no such route');
    const t = o.target();
    const vault = t.vaults?.get(operator.vaultId)?.row.name ?? t.vault.name;
    return stream(reply, async (send) => ({
      summary: await indexOp(t, { rebuild: request.body?.rebuild === true, vault }, (p) => send({ progress: p })),
    }));
  });
}

/** Newline-delimited JSON: progress objects while the command runs, then {done: result} or {error}. */
async function stream(
  reply: FastifyReply,
  run: (send: (event: object) => void) => Promise<object>,
): Promise<FastifyReply> {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  const send = (event: object) => {
    if (!res.writableEnded) res.write(JSON.stringify(event) + '\n');
  };
  try {
    send({ done: await run(send) });
  } catch (e) {
    const err =
      e instanceof OperationError
        ? { code: e.code, message: e.message, exitCode: e.exitCode }
        : { code: 'internal', message: (e as Error).message, exitCode: 1 };
    send({ error: err });
  }
  res.end();
  return reply;
}

/**
 * Why a stdio asking for the vault at `wanted` (its vault.path / EXO_VAULT_PATH) must not be relayed to
 * this server, which serves the one at `served`. Undefined when they are one folder.
 */
function vaultMismatch(wanted: string, served: string): string | undefined {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  if (real(wanted) === real(served)) return undefined;
  return `the running server (PID ${process.pid}) serves the vault at ${served}, but this stdio was asked for the vault at ${wanted} (vault.path or EXO_VAULT_PATH); refusing to relay to the wrong vault. Use the same config as the server, or give this one its own database (database.url) so it is not the same server's`;
}

export type { FastifyInstance };
