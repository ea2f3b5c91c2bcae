// The HTTP server: Fastify with helmet, the MCP routes, /health, and dispatch of family route
// prefixes (e.g. /transfer) to the serving generation's own Fastify instance, so routes hot-swap. It also
// owns the connection limits: request/header/keep-alive timeouts, a connection cap, and a small body cap
// for requests that carry no valid credential.
import http from 'node:http';
import { Transform } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import helmet from 'helmet';
import type { FamilyRegistry } from '../families/registry.js';
import {
  jsonRpcError,
  mcpHttpEndpoint,
  type HttpTransportOptions,
  type McpHttpEndpoint,
} from '../mcp/http-transport.js';
import type { OAuthServer } from '../oauth/server.js';
import type { HostMetrics } from '../metrics/index.js';
import { mayScrape } from '../metrics/scrape-access.js';
import { hostCheck } from './host-check.js';
import type { HttpSurface, SurfaceDeps } from './surfaces.js';
import { databaseUnavailable, isDatabaseUnavailable } from '../db/unavailable.js';
import { refusalJsonRpcError } from '../refusal-presenter.js';
import type { Answering } from './exchange.js';

/** server.* connection limits (see the settings schema for what each one means). */
export interface ConnectionLimits {
  readonly requestTimeoutMs: number;
  readonly headersTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly maxConnections: number;
  readonly unauthenticatedBodyLimitBytes: number;
}

export interface HttpAppOptions extends Omit<HttpTransportOptions, 'isAllowedHost' | 'isAllowedOrigin' | 'challenge'> {
  /** The embedded authorization server, when offered (server.publicUrl set, oauth.enabled). */
  readonly oauth?: OAuthServer;
  readonly connection: ConnectionLimits;
  readonly registry: FamilyRegistry;
  readonly allowedHosts: readonly string[];
  readonly allowedOrigins: readonly string[];
  readonly publicUrl: string | null;
  readonly health: () => Promise<Record<string, unknown>>;
  /**
   * Whether a request comes from an authenticated operator (a credential or panel session of an admin
   * user): only they see /health's per-vault detail; everyone else sees the overall status alone.
   */
  readonly isOperator: (authorization: string | undefined, cookie: string | undefined) => Promise<boolean>;
  /** Prometheus metrics and who may scrape them, when metrics.enabled. */
  readonly metricsEndpoint?: {
    readonly registry: HostMetrics;
    readonly access: { token: string; allowLoopback: boolean };
  };
  /**
   * Pages clients of the host mount here (the operator panel at /admin), each with what the host gives them
   * (the Host and Origin checks are this app's).
   */
  readonly surfaces?: {
    readonly mount: readonly HttpSurface[];
    readonly deps: Omit<SurfaceDeps, 'isAllowedHost' | 'isAllowedOrigin'>;
  };
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export async function buildHttpApp(o: HttpAppOptions): Promise<FastifyInstance> {
  const publicOrigin = o.publicUrl ? new URL(o.publicUrl).origin : undefined;
  const allowedOrigins = new Set(o.allowedOrigins);
  const isAllowedHost = hostCheck(o.allowedHosts, o.publicUrl);
  const isAllowedOrigin = (origin: string | undefined) => {
    if (!origin) return true;
    if (allowedOrigins.has(origin) || origin === publicOrigin) return true;
    try {
      return LOCAL_HOSTS.has(new URL(origin).hostname) || LOCAL_HOSTS.has(`[${new URL(origin).hostname}]`);
    } catch {
      return false;
    }
  };

  const limits = o.connection;
  // The MCP endpoint answers on node's request path, ahead of Fastify's (made below, before any request).
  let mcp: McpHttpEndpoint | undefined;
  const app = Fastify({
    logger: false,
    bodyLimit: o.bodyLimitBytes,
    serverFactory: (handler) => {
      const server = http.createServer(
        {
          requestTimeout: limits.requestTimeoutMs,
          headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
          keepAliveTimeout: limits.keepAliveTimeoutMs,
          // how often Node looks for requests past those timeouts (its default, 30 s, would let them overstay)
          connectionsCheckingInterval: Math.max(250, Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4),
        },
        (req, res) => {
          if (mcp?.claims(req)) return mcp.serve(req, res);
          if (o.oauth?.owns(req.url ?? '/')) return o.oauth.handle(req, res);
          const gen = o.registry.routeFor(req.url ?? '/');
          if (gen?.routeApp && gen.enter()) {
            res.on('close', () => gen.leave());
            gen.routeApp.routing(req, res);
            return;
          }
          handler(req, res);
        },
      );
      server.maxConnections = limits.maxConnections;
      return server;
    },
  });
  // Helmet's headers on every response, its middleware built once (the Fastify plugin built it again on
  // every request, a measurable share of a small tool call).
  const securityHeaders = helmet({ contentSecurityPolicy: false, crossOriginResourcePolicy: false });
  app.addHook('onRequest', (request, reply, done) =>
    securityHeaders(request.raw, reply.raw, (err?: unknown) => done(err as Error | undefined)),
  );
  // A GET or DELETE may say application/json and send no body (the Python SDK closes its session so).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '' && request.method !== 'POST') return done(null, undefined);
    parseJson(request, body as string, done);
  });

  // The sign-in and consent forms post urlencoded fields (they work without JavaScript).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    const form: Record<string, string | string[]> = {};
    for (const [k, v] of new URLSearchParams(body as string)) {
      const had = form[k];
      form[k] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v];
    }
    done(null, form);
  });

  const answerError = (error: Error & { statusCode?: number; code?: string }, url: string, reply: Answering) => {
    // The database went away under the request (a restart, a failover; authentication reads it too):
    // 503 with a retryable refusal, as a client should treat it, not an internal error.
    if (isDatabaseUnavailable(error)) {
      o.log.warn({ err: error.message, url }, 'request failed: the database connection failed');
      return reply
        .code(503)
        .header('retry-after', '1')
        .header('content-type', 'application/json')
        .send({ jsonrpc: '2.0', error: refusalJsonRpcError(databaseUnavailable()), id: null });
    }
    const status = error.statusCode ?? 500;
    if (status >= 500) o.log.error({ err: error.stack ?? error.message, url }, 'http error');
    if (error.code === 'EXO_UNAUTH_BODY_TOO_LARGE') return jsonRpcError(reply, 413, -32600, error.message);
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return jsonRpcError(
        reply,
        413,
        -32600,
        `Request body over the limit of ${o.bodyLimitBytes} bytes (server.bodyLimitBytes)`,
      );
    }
    if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError)
      return jsonRpcError(reply, 400, -32700, 'Parse error: the body is not valid JSON');
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
      return jsonRpcError(reply, 415, -32600, 'Unsupported content type: send application/json');
    return jsonRpcError(
      reply,
      status,
      status >= 500 ? -32603 : -32600,
      status >= 500 ? 'Internal error' : error.message,
    );
  };
  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, request, reply) =>
    answerError(error, request.url, reply),
  );

  // Fastify's routes take no credential before their body (the MCP endpoint, which does, is not one of
  // them): their bodies get a small cap.
  app.addHook('preParsing', async (request, _reply, payload) => {
    const cap = limits.unauthenticatedBodyLimitBytes;
    const tooLarge = () =>
      Object.assign(
        new Error(
          `Request body over the limit of ${cap} bytes for unauthenticated requests (server.unauthenticatedBodyLimitBytes)`,
        ),
        { statusCode: 413, code: 'EXO_UNAUTH_BODY_TOO_LARGE' },
      );
    if (Number(request.headers['content-length'] ?? 0) > cap) throw tooLarge();
    let seen = 0;
    return payload.pipe(
      new Transform({
        transform(chunk: Buffer, _enc, done) {
          seen += chunk.length;
          done(seen > cap ? tooLarge() : null, chunk);
        },
      }),
    );
  });

  app.get('/health', async (request, reply) => {
    if (!isAllowedHost(request.headers.host))
      return jsonRpcError(
        reply,
        403,
        -32000,
        'Forbidden: Host header not allowed (DNS rebinding protection); add it to server.allowedHosts',
      );
    if (!isAllowedOrigin(request.headers.origin))
      return jsonRpcError(reply, 403, -32000, 'Forbidden: Origin not allowed; add it to server.allowedOrigins');
    const body = await o.health();
    const code = body.status === 'down' ? 503 : 200;
    // Vault names and counts would enumerate users on a multi-user server: detail for operators only.
    const operator = await o.isOperator(request.headers.authorization, request.headers.cookie).catch(() => false);
    reply.header('cache-control', 'no-store');
    return reply.code(code).send(operator ? body : { status: body.status });
  });

  const metrics = o.metricsEndpoint;
  app.get('/metrics', async (request, reply) => {
    if (!metrics) return reply.code(404).send({ error: 'metrics are off (metrics.enabled)' });
    if (
      !mayScrape(
        metrics.access,
        request.headers.authorization,
        request.socket.remoteAddress,
        request.headers['x-forwarded-for'] !== undefined,
      )
    ) {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer realm="exocortex-metrics"')
        .send({ error: 'a scraper sends Authorization: Bearer <metrics.token>' });
    }
    const { contentType, body } = await metrics.registry.render();
    return reply.header('content-type', contentType).header('cache-control', 'no-store').send(body);
  });

  for (const surface of o.surfaces?.mount ?? [])
    await surface.register(app, { ...o.surfaces!.deps, isAllowedHost, isAllowedOrigin });
  o.oauth?.register(app);
  const oauth = o.oauth;
  mcp = mcpHttpEndpoint({
    ...o,
    isAllowedHost,
    isAllowedOrigin,
    challenge: oauth ? (path, extra) => oauth.challenge(path, extra) : undefined,
    metrics: metrics?.registry,
    headers: (req, res) => securityHeaders(req, res, () => undefined),
    onError: (error, request, reply) => answerError(error, request.url, reply),
  });
  return app;
}
