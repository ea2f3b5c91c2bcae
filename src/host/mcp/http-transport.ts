// MCP over Streamable HTTP: POST/GET/DELETE /mcp (and POST /), stateful sessions bound to the
// credential that opened them, or stateless (a fresh server per request). Host, Origin, the credential
// and the content type are checked from the headers in onRequest, before a byte of the body is read.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { isRefusal, type Refusal } from '../../sdk/refusals.js';
import type { Logger, Principal } from '../../sdk/types.js';
import type { ApiKeyVerifier } from '../auth/api-keys.js';
import { createMcpServer, type ServerDeps } from './server-factory.js';
import type { LiveSession, SessionHub } from './sessions.js';

export interface HttpTransportOptions {
  readonly mode: 'stateful' | 'stateless';
  readonly maxSessions: number;
  readonly maxSessionsPerCredential: number;
  /** Turns the request's bearer credential into a principal (the admin channel's always answers the operator). */
  readonly verifier: Pick<ApiKeyVerifier, 'verify'>;
  readonly hub: SessionHub;
  readonly deps: ServerDeps;
  readonly log: Logger;
  readonly isAllowedHost: (host: string | undefined) => boolean;
  readonly isAllowedOrigin: (origin: string | undefined) => boolean;
}

export function jsonRpcError(reply: FastifyReply, status: number, code: number, message: string, data?: unknown): FastifyReply {
  return reply.code(status).header('content-type', 'application/json').send({ jsonrpc: '2.0', error: { code, message, ...(data ? { data } : {}) }, id: null });
}

/** The principal authenticated in onRequest, for the handler of the same request. */
const principals = new WeakMap<FastifyRequest, Principal>();

export function isAuthenticated(request: FastifyRequest): boolean {
  return principals.has(request);
}

function isJson(contentType: string | undefined): boolean {
  return /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(contentType ?? '');
}

export function registerMcpRoutes(app: FastifyInstance, o: HttpTransportOptions): void {
  // Runs before Fastify reads the body: a request without a valid credential never has its body buffered.
  const onRequest = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!o.isAllowedHost(request.headers.host)) return jsonRpcError(reply, 403, -32000, 'Forbidden: Host header not allowed (DNS rebinding protection); add it to server.allowedHosts');
    if (!o.isAllowedOrigin(request.headers.origin)) return jsonRpcError(reply, 403, -32000, 'Forbidden: Origin not allowed; add it to server.allowedOrigins');
    try {
      principals.set(request, await o.verifier.verify(bearer(request)));
    } catch (e) {
      if (!isRefusal(e)) throw e;
      reply.header('www-authenticate', 'Bearer realm="exocortex"').header('connection', 'close');
      return jsonRpcError(reply, 401, -32001, (e as Refusal).message, { refusal: { code: (e as Refusal).code } });
    }
    if (request.method === 'POST' && !isJson(request.headers['content-type'])) {
      return jsonRpcError(reply.header('connection', 'close'), 415, -32600, 'Unsupported content type: send application/json');
    }
    return undefined;
  };
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const principal = principals.get(request);
    if (!principal) return jsonRpcError(reply, 401, -32001, 'A valid API key is required');
    if (request.method === 'POST' && Array.isArray(request.body) && request.body.length === 0) {
      return jsonRpcError(reply, 400, -32600, 'Invalid Request: an empty batch');
    }
    if (o.mode === 'stateless') return stateless(request, reply, principal, o);
    return stateful(request, reply, principal, o);
  };
  app.route({ method: ['POST', 'GET', 'DELETE'], url: '/mcp', onRequest, handler });
  app.route({ method: 'POST', url: '/', onRequest, handler });
}

/** Run `serve` counting it as in flight on `session`, so eviction passes over busy sessions. */
async function tracked(session: LiveSession, reply: FastifyReply, serve: () => Promise<void>): Promise<void> {
  session.inFlight = (session.inFlight ?? 0) + 1;
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    session.inFlight = Math.max(0, (session.inFlight ?? 1) - 1);
    session.lastSeen = Date.now();
  };
  reply.raw.once('close', finish);
  try {
    await serve();
  } catch (e) {
    finish();
    throw e;
  }
}

function bearer(request: FastifyRequest): string | undefined {
  const h = request.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : undefined;
}

async function stateful(request: FastifyRequest, reply: FastifyReply, principal: Principal, o: HttpTransportOptions) {
  const sid = request.headers['mcp-session-id'];
  if (typeof sid === 'string') {
    const session = o.hub.get(sid);
    if (!session || session.credentialId !== principal.id) return jsonRpcError(reply, 404, -32001, 'Session not found; initialize a new one');
    session.lastSeen = Date.now();
    const transport = (session as unknown as { transport: StreamableHTTPServerTransport }).transport;
    reply.hijack();
    await tracked(session, reply, () => transport.handleRequest(request.raw, reply.raw, request.body));
    return reply;
  }
  if (request.method !== 'POST' || !isInitializeRequest(request.body)) {
    return jsonRpcError(reply, 400, -32000, 'Bad Request: send initialize first, or include the Mcp-Session-Id header');
  }
  // One credential may not take every session: at its own cap it gives up its least recently used idle
  // session; at the global cap the credential holding the most does.
  if (o.hub.countFor(principal.id) >= o.maxSessionsPerCredential && !(await o.hub.evictIdle(principal.id))) {
    return jsonRpcError(reply, 503, -32000, `This credential has ${o.maxSessionsPerCredential} sessions open, all busy (server.maxSessionsPerCredential); close one or retry later`);
  }
  if (o.hub.size >= o.maxSessions && !(await o.hub.evictIdle())) return jsonRpcError(reply, 503, -32000, 'Too many open sessions; close one or retry later');
  const server = createMcpServer(principal, o.deps);
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    // Plain JSON answers to POSTs (cheaper than an SSE stream per call); server-initiated
    // notifications such as list_changed still flow over the session's GET stream.
    enableJsonResponse: true,
    onsessioninitialized: (id) => {
      o.hub.add(id, Object.assign(
        {
          server,
          credentialId: principal.id,
          lastSeen: Date.now(),
          async close() {
            await transport.close();
            await server.close();
          },
        },
        { transport },
      ));
    },
    onsessionclosed: (id) => o.hub.delete(id),
  });
  transport.onclose = () => {
    if (transport.sessionId) o.hub.delete(transport.sessionId);
  };
  await server.connect(transport);
  reply.hijack();
  await transport.handleRequest(request.raw, reply.raw, request.body);
  return reply;
}

async function stateless(request: FastifyRequest, reply: FastifyReply, principal: Principal, o: HttpTransportOptions) {
  if (request.method !== 'POST') return jsonRpcError(reply.header('allow', 'POST'), 405, -32000, 'Method not allowed: this server is stateless (POST only)');
  const server = createMcpServer(principal, o.deps);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  reply.raw.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  reply.hijack();
  await transport.handleRequest(request.raw, reply.raw, request.body);
  return reply;
}
