// The OAuth side of the host, assembled: the provider (its Koa callback answers /authorize, /token,
// /register, /revoke and the metadata), the interaction pages, RFC 9728 resource metadata, the access
// token verifier, and the sweep of expired rows. Built only when server.publicUrl is set and oauth on.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type Provider from 'oidc-provider';
import type { Logger } from '../../sdk/types.js';
import type { HostSettings } from '../settings/schema.js';
import { sweepExpired } from './adapter.js';
import { AccessTokenVerifier, bearerChallenge, resourceMetadata } from './access-tokens.js';
import type { AttemptBudget } from '../auth/attempt-budget.js';
import { clientAddress, registerInteractionRoutes } from './interactions.js';
import { createProvider, endpointsFor, isProviderPath, type OAuthEndpoints, type ProviderOptions } from './provider.js';

/** How often expired OAuth rows are swept. */
const SWEEP_INTERVAL_MS = 3_600_000;

export class OAuthServer {
  private sweeper: NodeJS.Timeout | undefined;
  private readonly callback: (req: IncomingMessage, res: ServerResponse) => void;

  private constructor(
    readonly provider: Provider,
    readonly endpoints: OAuthEndpoints,
    readonly tokens: AccessTokenVerifier,
    private readonly db: Kysely<any>,
    private readonly log: Logger,
    private readonly settings: HostSettings['oauth'],
    private readonly csrfKey: string,
    private readonly signInBudget: AttemptBudget,
    /** Dynamic registrations per client address per hour (oauth.registrationsPerHour). */
    private readonly registrations: AttemptBudget,
  ) {
    this.callback = provider.callback();
  }

  static async start(o: {
    db: Kysely<any>;
    log: Logger;
    publicUrl: string;
    settings: HostSettings['oauth'];
    /** Failed sign-ins per address, shared with the panel. */
    signInBudget: AttemptBudget;
    registrationBudget: AttemptBudget;
    fetchSeams?: ProviderOptions['fetchSeams'];
  }): Promise<OAuthServer> {
    const endpoints = endpointsFor(o.publicUrl);
    const s = o.settings;
    const provider = await createProvider({
      db: o.db,
      log: o.log,
      endpoints,
      accessTokenTtlSeconds: s.accessTokenTtlSeconds,
      refreshTokenTtlSeconds: s.refreshTokenTtlSeconds,
      clientMetadataMaxBytes: s.clientMetadataMaxBytes,
      clientMetadataTimeoutMs: s.clientMetadataTimeoutMs,
      allowedRedirectHosts: s.allowedRedirectHosts,
      allowedClientMetadataHosts: s.allowedClientMetadataHosts,
      fetchSeams: o.fetchSeams,
    });
    const row = await o.db
      .selectFrom('oauth_secrets')
      .select('value')
      .where('name', '=', 'cookie-keys')
      .executeTakeFirstOrThrow();
    const keys = (typeof row.value === 'string' ? JSON.parse(row.value) : row.value) as string[];
    const server = new OAuthServer(
      provider,
      endpoints,
      new AccessTokenVerifier(provider, o.db, endpoints),
      o.db,
      o.log,
      s,
      keys[0],
      o.signInBudget,
      o.registrationBudget,
    );
    await server.sweep();
    server.sweeper = setInterval(() => void server.sweep(), SWEEP_INTERVAL_MS);
    server.sweeper.unref();
    return server;
  }

  /** Delete expired rows now (also run at start and every hour). */
  async sweep(): Promise<void> {
    try {
      const n = (await sweepExpired(this.db)) + (await this.registrations.sweep());
      if (n) this.log.debug({ rows: n }, 'expired oauth rows swept');
    } catch (e) {
      this.log.warn({ err: (e as Error).message }, 'oauth sweep failed');
    }
  }

  /** Whether the provider answers this request itself (before Fastify routing). */
  owns(url: string): boolean {
    const pathname = url.split('?')[0];
    return isProviderPath(pathname) || pathname === '/.well-known/oauth-authorization-server';
  }

  /** Hand a request the provider owns to its Koa app. RFC 8414's well-known name serves the same document. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    if (req.method === 'POST' && url.split('?')[0] === '/register') {
      this.registrations.spend(clientAddress(req)).then(
        (spent) => {
          if (spent.allowed) return this.serveProvider(req, res, url);
          const seconds = spent.retryAfterSeconds;
          res.writeHead(429, {
            'content-type': 'application/json',
            'retry-after': String(seconds),
            'cache-control': 'no-store',
          });
          res.end(
            JSON.stringify({
              error: 'temporarily_unavailable',
              error_description: `too many client registrations from this address (oauth.registrationsPerHour); retry in ${seconds} s`,
            }),
          );
        },
        (e: unknown) => {
          this.log.error({ err: (e as Error).message }, 'registration budget unavailable');
          res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '5', 'cache-control': 'no-store' });
          res.end(JSON.stringify({ error: 'temporarily_unavailable', error_description: 'try again shortly' }));
        },
      );
      return;
    }
    this.serveProvider(req, res, url);
  }

  /** The provider's own answer (RFC 8414's well-known name rewritten to the document it serves). */
  private serveProvider(req: IncomingMessage, res: ServerResponse, url: string): void {
    if (url.split('?')[0] === '/.well-known/oauth-authorization-server')
      req.url = `/.well-known/openid-configuration${url.slice('/.well-known/oauth-authorization-server'.length)}`;
    this.callback(req, res);
  }

  challenge(path: string, extra?: { error?: string; scope?: string; description?: string }): string {
    return bearerChallenge(this.endpoints, path, extra);
  }

  /** The Fastify side: resource metadata (root and path-inserted) and the interaction pages. */
  register(app: FastifyInstance): void {
    app.get('/.well-known/oauth-protected-resource', async (_request, reply) =>
      reply
        .header('cache-control', 'public, max-age=3600')
        .header('access-control-allow-origin', '*')
        .send(resourceMetadata(this.endpoints, '')),
    );
    app.get('/.well-known/oauth-protected-resource/mcp', async (_request, reply) =>
      reply
        .header('cache-control', 'public, max-age=3600')
        .header('access-control-allow-origin', '*')
        .send(resourceMetadata(this.endpoints, '/mcp')),
    );
    registerInteractionRoutes(app, {
      provider: this.provider,
      db: this.db,
      log: this.log,
      endpoints: this.endpoints,
      csrfKey: this.csrfKey,
      signInBudget: this.signInBudget,
    });
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}
