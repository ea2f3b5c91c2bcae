// MCP over Streamable HTTP on /mcp and /, both protocol eras on one endpoint (SDK v2):
// - 2026-07-28 requests (a `_meta` protocol-version envelope) go to the SDK's per-request handler, which
//   answers server/discover, checks the Mcp-Method/Mcp-Name headers against the body and serves
//   subscriptions/listen streams; list changes and resource updates reach those streams through its bus.
// - 2025-era requests: an initialize opens a session bound to the credential (in `stateful` mode), a
//   request carrying a known session id is served by it, and a request without one is served on its own
//   by a fresh instance — clients that never echo Mcp-Session-Id (claude.ai's backend) keep working.
// Host, Origin, the credential and the content type are checked from the headers, before a byte of the
// body is read. The endpoint runs on node's request path, not Fastify's (see ../http/exchange.ts): the
// listener hands it the requests `mcpHttpEndpoint` claims.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NodeStreamableHTTPServerTransport, toNodeHandler } from './sdk-node.js';
import {
  createMcpHandler,
  classifyInboundRequest,
  isInitializeRequest,
  type AuthInfo,
  type McpRequestContext,
} from './sdk.js';
import { isRefusal, Refusal } from '../../sdk/refusals.js';
import { refusalHttpResponse } from '../refusal-presenter.js';
import type { Logger, Principal } from '../../sdk/types.js';
import type { ApiKeyVerifier } from '../auth/api-keys.js';
import { HopRefused, type Forwarder } from '../cluster/forward.js';
import { HEADER_MISMATCH, paramHeaderMismatch } from './param-headers.js';
import { createMcpServer, type ServerDeps } from './server-factory.js';
import {
  BodyTooLarge,
  hasBody,
  NodeReply,
  NodeRequest,
  parseJsonBody,
  readBody,
  type Answering,
} from '../http/exchange.js';
import type { LiveSession, SessionHub } from './sessions.js';

export interface HttpTransportOptions {
  /** `stateful`: a 2025 initialize opens a session; `stateless`: never (every request stands alone). */
  readonly mode: 'stateful' | 'stateless';
  readonly maxSessions: number;
  readonly maxSessionsPerCredential: number;
  /** Open subscriptions/listen streams the server holds at most (2026-07-28 clients). */
  readonly maxListenStreams: number;
  readonly bodyLimitBytes: number;
  /** Turns the request's bearer credential into a principal (the admin channel's always answers the operator). */
  readonly verifier: Pick<ApiKeyVerifier, 'verify'>;
  readonly hub: SessionHub;
  readonly deps: ServerDeps;
  readonly log: Logger;
  readonly isAllowedHost: (host: string | undefined) => boolean;
  readonly isAllowedOrigin: (origin: string | undefined) => boolean;
  /**
   * The WWW-Authenticate challenge for a request to `path` (RFC 9728 resource metadata and the scope
   * needed) when the OAuth authorization server is offered; absent: API keys only.
   */
  readonly challenge?: (path: string, extra?: { error?: string; scope?: string; description?: string }) => string;
  /** Several processes on one PostgreSQL server: calls for a vault owned elsewhere go to its owner. */
  readonly forwarder?: Forwarder;
  /** Told of each MCP request answered other than tools/call (the dispatcher reports those) and listen streams. */
  readonly metrics?: { request(method: string, seconds: number, status: number): void };
  /** Headers every response carries (the listener's security headers), set before anything is answered. */
  readonly headers?: (req: IncomingMessage, res: ServerResponse) => void;
  /** Answers a request whose handling threw (the listener's error mapping); absent: 500 Internal error. */
  readonly onError?: (error: Error, request: NodeRequest, reply: NodeReply) => void;
}

type McpRequest = NodeRequest;
type McpReply = NodeReply;

/** The JSON-RPC method of a request, for metrics: bounded to method-shaped names (one label per batch). */
function methodOf(request: McpRequest): string {
  if (request.method !== 'POST') return `HTTP ${request.method}`;
  const body = request.body as { method?: unknown } | unknown[] | null;
  if (Array.isArray(body)) return 'batch';
  const m = body && typeof body === 'object' ? (body as { method?: unknown }).method : undefined;
  return typeof m === 'string' && /^[a-z][a-zA-Z_/]{0,39}$/.test(m) ? m : 'other';
}

/** A refusal of the transport's own (no credential, too narrow a scope), as the refusal presenter words it. */
function sendRefusal(
  reply: Answering,
  refusal: Refusal,
  id: string | number | null = null,
  statusOverride?: number,
): Answering {
  const { status, body } = refusalHttpResponse(refusal, id);
  return reply
    .code(statusOverride ?? status)
    .header('content-type', 'application/json')
    .send(body);
}

/** A JSON-RPC error answer; `id` is the request's when its body was parsed. */
export function jsonRpcError<R extends Answering>(
  reply: R,
  status: number,
  code: number,
  message: string,
  data?: unknown,
  id: string | number | null = null,
): R {
  return reply
    .code(status)
    .header('content-type', 'application/json')
    .send({ jsonrpc: '2.0', error: { code, message, ...(data ? { data } : {}) }, id }) as R;
}

function isJson(contentType: string | undefined): boolean {
  return /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(contentType ?? '');
}

/** The id of a single JSON-RPC request body, for error answers (null for batches and unparsed bodies). */
function idOf(body: unknown): string | number | null {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return null;
  const id = (body as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** The principal travels to the SDK's factory as pass-through auth info. */
function authInfoFor(principal: Principal): AuthInfo {
  return { token: '', clientId: principal.id, scopes: [...principal.scopes], extra: { principal } };
}

function principalOf(ctx: McpRequestContext): Principal {
  const principal = ctx.authInfo?.extra?.principal as Principal | undefined;
  if (!principal) throw new Error('an MCP request reached the server factory without a principal');
  return principal;
}

/** The paths the endpoint answers on (its query string aside), and the methods. */
const MCP_PATHS = new Set(['/mcp', '/']);
const MCP_METHODS = new Set(['POST', 'GET', 'DELETE', 'HEAD']);

export interface McpHttpEndpoint {
  /** Whether this request is the endpoint's (a method and path it answers). */
  claims(req: IncomingMessage): boolean;
  /** Serve a request the endpoint claims; whatever goes wrong is answered, never thrown. */
  serve(req: IncomingMessage, res: ServerResponse): void;
}

export function mcpHttpEndpoint(o: HttpTransportOptions): McpHttpEndpoint {
  // One 2026-07-28 handler per vault: its listen bus carries only that vault's resource updates, so a
  // subscription never hears of a note in another user's vault that happens to share a URI.
  const modernByVault = new Map<number, (req: IncomingMessage, res: ServerResponse, body: unknown) => Promise<void>>();
  const modernFor = (vaultId: number) => {
    let serve = modernByVault.get(vaultId);
    if (!serve) {
      const modern = createMcpHandler((ctx) => createMcpServer(principalOf(ctx), o.deps, { notifications: true }), {
        legacy: 'reject',
        maxSubscriptions: o.maxListenStreams,
        maxRequestBodySize: o.bodyLimitBytes,
        onerror: (e) => o.log.debug({ err: e.message }, 'mcp request refused'),
      });
      o.hub.addListenBus(modern.notify, vaultId);
      serve = toNodeHandler(modern, { maxRequestBodySize: o.bodyLimitBytes });
      modernByVault.set(vaultId, serve);
    }
    return serve;
  };

  // Runs before the body is read: a request without a valid credential never has its body buffered. The
  // principal to serve, or undefined once the request was answered (refused, or forwarded to its owner).
  const authenticate = async (request: McpRequest, reply: McpReply): Promise<Principal | undefined> => {
    if (!o.isAllowedHost(request.headers.host)) {
      jsonRpcError(
        reply,
        403,
        -32000,
        'Forbidden: Host header not allowed (DNS rebinding protection); add it to server.allowedHosts',
      );
      return undefined;
    }
    if (!o.isAllowedOrigin(request.headers.origin)) {
      jsonRpcError(reply, 403, -32000, 'Forbidden: Origin not allowed; add it to server.allowedOrigins');
      return undefined;
    }
    let principal: Principal;
    try {
      // Another process's admin channel forwards its local operator as a signed assertion (no bearer).
      principal = o.forwarder?.assertedOperator(request) ?? (await o.verifier.verify(bearer(request)));
    } catch (e) {
      if (e instanceof HopRefused) {
        jsonRpcError(reply.header('connection', 'close'), 403, -32000, `Forbidden: ${e.message}`);
        return undefined;
      }
      if (!isRefusal(e)) throw e;
      reply
        .header(
          'www-authenticate',
          o.challenge
            ? o.challenge(request.url, bearer(request) ? { error: 'invalid_token' } : {})
            : 'Bearer realm="exocortex"',
        )
        .header('connection', 'close');
      sendRefusal(reply, e as Refusal);
      return undefined;
    }
    if (o.forwarder) {
      try {
        principal = o.forwarder.narrow(request, principal);
      } catch (e) {
        if (!(e instanceof HopRefused)) throw e;
        jsonRpcError(reply.header('connection', 'close'), 403, -32000, `Forbidden: ${e.message}`);
        return undefined;
      }
      if (await o.forwarder.maybeForward(request, reply, principal)) return undefined;
    }
    return principal;
  };

  // The body, parsed into request.body as Fastify's JSON parser would: false once the request was answered
  // (not JSON, too large, cut short). GET and HEAD bodies are never read; a POST must say JSON before a
  // byte is read; a DELETE's body is read only when it has one and says what it is.
  const parseBody = async (request: McpRequest, reply: McpReply): Promise<boolean> => {
    if (request.method === 'GET' || request.method === 'HEAD') return true;
    const type = request.headers['content-type'];
    if (request.method !== 'POST' && (!hasBody(request) || type === undefined)) return true;
    if (!isJson(type)) {
      jsonRpcError(reply.header('connection', 'close'), 415, -32600, 'Unsupported content type: send application/json');
      return false;
    }
    let text: string;
    try {
      text = (await readBody(request.raw, o.bodyLimitBytes)).toString('utf8');
    } catch (e) {
      if (e instanceof BodyTooLarge)
        jsonRpcError(
          reply.header('connection', 'close'),
          413,
          -32600,
          `Request body over the limit of ${o.bodyLimitBytes} bytes (server.bodyLimitBytes)`,
        );
      else jsonRpcError(reply.header('connection', 'close'), 400, -32600, 'The request body did not arrive whole');
      return false;
    }
    if (text === '') {
      if (request.method !== 'POST') return true;
      jsonRpcError(reply, 400, -32600, 'Invalid Request: the body is empty; send a JSON-RPC message');
      return false;
    }
    try {
      request.body = parseJsonBody(text);
    } catch {
      jsonRpcError(reply, 400, -32700, 'Parse error: the body is not valid JSON');
      return false;
    }
    return true;
  };

  const handler = async (request: McpRequest, reply: McpReply, principal: Principal) => {
    if (o.metrics) {
      const method = methodOf(request);
      if (method !== 'tools/call' && method !== 'subscriptions/listen') {
        const started = performance.now();
        reply.raw.once('finish', () =>
          o.metrics!.request(method, (performance.now() - started) / 1000, reply.raw.statusCode),
        );
      }
    }
    if (request.method === 'POST' && Array.isArray(request.body) && request.body.length === 0) {
      return jsonRpcError(reply, 400, -32600, 'Invalid Request: an empty batch');
    }
    const needed =
      o.challenge && principal.kind === 'oauth' ? missingScope(principal, request.body, o.deps) : undefined;
    if (needed) {
      const refusal = new Refusal('insufficient_scope', { scope: needed.scope, reason: needed.why });
      reply.header(
        'www-authenticate',
        o.challenge!(request.url, { error: 'insufficient_scope', scope: needed.scope, description: needed.why }),
      );
      return sendRefusal(reply, refusal, idOf(request.body));
    }
    if (request.method === 'POST' && !isLegacy(request)) {
      const mismatch = paramHeaderProblem(request, o.deps);
      if (mismatch)
        return jsonRpcError(
          reply,
          400,
          HEADER_MISMATCH,
          `Bad Request: the request headers and body disagree: ${mismatch}`,
          undefined,
          idOf(request.body),
        );
      (request.raw as typeof request.raw & { auth?: AuthInfo }).auth = authInfoFor(principal);
      if ((request.body as { method?: unknown } | null)?.method === 'subscriptions/listen') {
        // A listen stream is a connection like a session: the same per-credential and per-user caps.
        const capped = await connectionCapped(principal, o, 'listen streams');
        if (capped) return jsonRpcError(reply, 503, -32000, capped, undefined, idOf(request.body));
        // The vault may have changed owner since onRequest chose to serve it here (its body was read in
        // between): a stream opened now would never hear of the vault's changes, which the new owner
        // announces, and no lease loss would end it. The client listens again and reaches the owner.
        if (o.forwarder && !o.forwarder.owns(principal.vaultId))
          return sendRefusal(
            reply.header('retry-after', '1'),
            new Refusal('vault_unavailable', { reason: 'its owner process is changing; retry in a moment' }),
            idOf(request.body),
            503,
          );
        o.hub.trackStream(principal.id, reply.raw, principal.user, principal.vaultId);
      }
      await modernFor(principal.vaultId)(request.raw, reply.raw, request.body);
      return;
    }
    await legacy(request, reply, principal, o);
  };

  const failed = (error: Error, request: McpRequest, reply: McpReply) => {
    if (o.onError) return o.onError(error, request, reply);
    o.log.error({ err: error.stack ?? error.message, url: request.url }, 'mcp request failed');
    jsonRpcError(reply, 500, -32603, 'Internal error');
  };

  return {
    claims(req) {
      if (!MCP_METHODS.has(req.method ?? '')) return false;
      const url = req.url ?? '/';
      const query = url.indexOf('?');
      return MCP_PATHS.has(query === -1 ? url : url.slice(0, query));
    },
    serve(req, res) {
      o.headers?.(req, res);
      const request = new NodeRequest(req);
      const reply = new NodeReply(res);
      const run = async () => {
        const principal = await authenticate(request, reply);
        if (principal && (await parseBody(request, reply))) await handler(request, reply, principal);
      };
      run().catch((e: unknown) => {
        const error = e instanceof Error ? e : new Error(String(e));
        if (res.headersSent) {
          o.log.error({ err: error.stack ?? error.message, url: request.url }, 'mcp request failed mid-answer');
          res.destroy();
        } else failed(error, request, reply);
      });
    },
  };
}

/**
 * The scope an OAuth principal lacks for this request (step-up, RFC 6750 §3.1): any request needs
 * vault:read, a tools/call of a write tool needs vault:write too.
 */
function missingScope(
  principal: Principal,
  body: unknown,
  deps: ServerDeps,
): { scope: string; why: string } | undefined {
  if (!principal.scopes.includes('read'))
    return { scope: 'vault:read', why: 'this access token does not carry the scope vault:read' };
  if (principal.scopes.includes('readwrite')) return undefined;
  const messages = Array.isArray(body) ? body : [body];
  for (const m of messages) {
    const call = m as { method?: unknown; params?: { name?: unknown } } | null;
    if (!call || call.method !== 'tools/call' || typeof call.params?.name !== 'string') continue;
    const entry = deps.registry.findTool(call.params.name);
    if (entry?.tool.writes)
      return {
        scope: 'vault:read vault:write',
        why: `${call.params.name} writes to the vault, which needs the scope vault:write`,
      };
  }
  return undefined;
}

/** SEP-2243's check of a tools/call naming a family tool that mirrors arguments into Mcp-Param-* headers. */
function paramHeaderProblem(request: McpRequest, deps: ServerDeps): string | undefined {
  const body = request.body as { method?: unknown; params?: { name?: unknown; arguments?: unknown } } | null;
  if (!body || body.method !== 'tools/call' || typeof body.params?.name !== 'string') return undefined;
  const entry = deps.registry.findTool(body.params.name);
  if (!entry) return undefined;
  return paramHeaderMismatch(entry.tool.schema.inputSchema, body.params.arguments, (name) => {
    const v = request.headers[name];
    return Array.isArray(v) ? v[0] : v;
  });
}

/**
 * Whether the SDK's entry would serve this POST as 2025-era traffic: its own classifier (what
 * isLegacyRequest runs) fed the parsed body and the three headers it reads, without building a web
 * Request from the headers on every call.
 */
function isLegacy(request: McpRequest): boolean {
  const header = (name: string) => {
    const v = request.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  };
  return (
    classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader: header('mcp-protocol-version'),
      mcpMethodHeader: header('mcp-method'),
      mcpNameHeader: header('mcp-name'),
      body: request.body ?? null,
    }).kind === 'legacy'
  );
}

/** Whether a request (or any request of a batch) carries a progress token. */
function asksForProgress(body: unknown): boolean {
  const one = (m: unknown) =>
    typeof m === 'object' &&
    m !== null &&
    (m as { params?: { _meta?: { progressToken?: unknown } } }).params?._meta?.progressToken !== undefined;
  return Array.isArray(body) ? body.some(one) : one(body);
}

function bearer(request: McpRequest): string | undefined {
  const h = request.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : undefined;
}

/** Run `serve` counting it as in flight on `session`, so eviction passes over busy sessions. */
async function tracked(session: LiveSession, reply: McpReply, serve: () => Promise<void>): Promise<void> {
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

/** 2025-era traffic: sessions for clients that keep them, one-request instances for the rest. */
async function legacy(request: McpRequest, reply: McpReply, principal: Principal, o: HttpTransportOptions) {
  const sid = request.headers['mcp-session-id'];
  if (typeof sid === 'string') {
    const session = o.hub.get(sid);
    if (!session || session.credentialId !== principal.id || !session.transport)
      return jsonRpcError(reply, 404, -32001, 'Session not found; initialize a new one', undefined, idOf(request.body));
    session.lastSeen = Date.now();
    const transport = session.transport as NodeStreamableHTTPServerTransport;
    await tracked(session, reply, () => transport.handleRequest(request.raw, reply.raw, request.body));
    return;
  }
  if (request.method !== 'POST') {
    return jsonRpcError(
      reply.header('allow', 'POST'),
      405,
      -32000,
      `Method not allowed: ${request.method} needs the Mcp-Session-Id of a session (2025 clients), or use subscriptions/listen (2026-07-28)`,
    );
  }
  if (o.mode === 'stateful' && isInitializeRequest(request.body)) return openSession(request, reply, principal, o);
  return serveAlone(request, reply, principal, o);
}

/**
 * Why one more connection (a session or a listen stream) is refused for this principal, or undefined:
 * one credential, and one user, may not take every connection. At its own cap a credential gives up its
 * least recently used idle session; listen streams count towards the caps but are never evicted.
 */
async function connectionCapped(
  principal: Principal,
  o: HttpTransportOptions,
  what: 'sessions' | 'listen streams',
): Promise<string | undefined> {
  if (o.hub.countFor(principal.id) >= o.maxSessionsPerCredential && !(await o.hub.evictIdle(principal.id)))
    return `This credential has ${o.maxSessionsPerCredential} sessions and listen streams open, none idle (server.maxSessionsPerCredential); close one or retry later (refused: one more of its ${what})`;
  const userCap = o.hub.sessionsPerUser(principal.user);
  if (
    userCap > 0 &&
    o.hub.countForUser(principal.user) >= userCap &&
    !(await o.hub.evictIdle(undefined, principal.user))
  )
    return `The user "${principal.user}" has ${userCap} sessions and listen streams open, none idle (their sessions limit); close one or retry later (refused: one more of their ${what})`;
  return undefined;
}

async function openSession(request: McpRequest, reply: McpReply, principal: Principal, o: HttpTransportOptions) {
  const id = idOf(request.body);
  const capped = await connectionCapped(principal, o, 'sessions');
  if (capped) return jsonRpcError(reply, 503, -32000, capped, undefined, id);
  if (o.hub.size >= o.maxSessions && !(await o.hub.evictIdle()))
    return jsonRpcError(reply, 503, -32000, 'Too many open sessions; close one or retry later', undefined, id);
  const server = createMcpServer(principal, o.deps, { notifications: true });
  // Answers stream as SSE, so a tool can ask the client for input (elicitation, sampling) mid-call and
  // progress reaches it; list_changed and resources/updated flow over the session's GET stream.
  const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (sessionId) => {
      o.hub.add(sessionId, {
        server,
        transport,
        credentialId: principal.id,
        user: principal.user,
        vaultId: principal.vaultId,
        lastSeen: Date.now(),
        async close() {
          await transport.close();
          await server.close();
        },
      });
    },
    onsessionclosed: (sessionId) => o.hub.delete(sessionId),
  });
  transport.onclose = () => {
    if (transport.sessionId) o.hub.delete(transport.sessionId);
  };
  await server.connect(transport);
  await transport.handleRequest(request.raw, reply.raw, request.body);
}

/**
 * One request on its own instance. It has nowhere to send notifications after the answer, so it does
 * not advertise list_changed or subscriptions (a session-less initialize learns that). A request that
 * asked for progress gets its answer as a stream, so the progress reaches it before the result; the
 * rest get plain JSON.
 */
async function serveAlone(request: McpRequest, reply: McpReply, principal: Principal, o: HttpTransportOptions) {
  const server = createMcpServer(principal, o.deps, { notifications: false });
  const transport = new NodeStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: !asksForProgress(request.body),
  });
  reply.raw.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(request.raw, reply.raw, request.body);
}
