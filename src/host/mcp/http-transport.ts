// MCP over Streamable HTTP: POST/GET/DELETE /mcp (and POST /), stateful sessions bound to the
// credential that opened them, or stateless (a fresh server per request). Auth happens before the
// SDK sees a byte; Host and Origin are checked against DNS rebinding.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { isRefusal, type Refusal } from '../../sdk/refusals.js';
import type { Logger, Principal } from '../../sdk/types.js';
import type { ApiKeyVerifier } from '../auth/api-keys.js';
import { createMcpServer, type ServerDeps } from './server-factory.js';
import type { SessionHub } from './sessions.js';

export interface HttpTransportOptions {
  readonly mode: 'stateful' | 'stateless';
  readonly maxSessions: number;
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

export function registerMcpRoutes(app: FastifyInstance, o: HttpTransportOptions): void {
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!o.isAllowedHost(request.headers.host)) return jsonRpcError(reply, 403, -32000, 'Forbidden: Host header not allowed (DNS rebinding protection); add it to server.allowedHosts');
    if (!o.isAllowedOrigin(request.headers.origin)) return jsonRpcError(reply, 403, -32000, 'Forbidden: Origin not allowed; add it to server.allowedOrigins');
    let principal: Principal;
    try {
      principal = await o.verifier.verify(bearer(request));
    } catch (e) {
      if (!isRefusal(e)) throw e;
      reply.header('www-authenticate', 'Bearer realm="exocortex"');
      return jsonRpcError(reply, 401, -32001, (e as Refusal).message, { refusal: { code: (e as Refusal).code } });
    }
    if (o.mode === 'stateless') return stateless(request, reply, principal, o);
    return stateful(request, reply, principal, o);
  };
  app.route({ method: ['POST', 'GET', 'DELETE'], url: '/mcp', handler });
  app.post('/', handler);
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
    await transport.handleRequest(request.raw, reply.raw, request.body);
    return reply;
  }
  if (request.method !== 'POST' || !isInitializeRequest(request.body)) {
    return jsonRpcError(reply, 400, -32000, 'Bad Request: send initialize first, or include the Mcp-Session-Id header');
  }
  if (o.hub.size >= o.maxSessions) return jsonRpcError(reply, 503, -32000, 'Too many open sessions; close one or retry later');
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
