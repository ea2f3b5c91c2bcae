// The embedded authorization server: oidc-provider configured for MCP connectors (DCR, Client ID
// Metadata Documents fetched through the SDK's SSRF rules, PKCE S256 required, resource indicators
// bound to this server's MCP URL, opaque access tokens, rotating refresh tokens, RFC 9207 iss) over the
// host database. Its keys are made once and stored; it never mints tokens for another resource.
import { storedSecret } from '../db/stored-secret.js';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type Provider from 'oidc-provider';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import {
  fetchUrl,
  systemConnector,
  systemResolver,
  type Connector,
  type Resolver,
} from '../../sdk/ssrf/guarded-fetch.js';
import type { Logger } from '../../sdk/types.js';
import { userByName } from '../auth/users.js';
import { KyselyOAuthAdapter } from './adapter.js';
import {
  clientMetadataUrlProblem,
  redirectUriProblem,
  redirectUrisProblems,
  type RedirectPolicy,
} from './redirect-policy.js';

/** The scopes this server's MCP resource knows; read maps to a read API key, write to readwrite. */
export const SCOPE_READ = 'vault:read';
export const SCOPE_WRITE = 'vault:write';
export const RESOURCE_SCOPES = [SCOPE_READ, SCOPE_WRITE] as const;

export interface OAuthEndpoints {
  /** The issuer: server.publicUrl without a trailing slash. */
  readonly issuer: string;
  /** The MCP resource URL every access token is minted for (RFC 8707 audience). */
  readonly resource: string;
}

export function endpointsFor(publicUrl: string): OAuthEndpoints {
  const issuer = publicUrl.replace(/\/+$/, '');
  return { issuer, resource: `${issuer}/mcp` };
}

export interface ProviderOptions extends RedirectPolicy {
  readonly db: Kysely<any>;
  readonly log: Logger;
  readonly endpoints: OAuthEndpoints;
  readonly accessTokenTtlSeconds: number;
  readonly refreshTokenTtlSeconds: number;
  readonly clientMetadataMaxBytes: number;
  readonly clientMetadataTimeoutMs: number;
  /** Test-only seams for the metadata document fetch (never set from configuration). */
  readonly fetchSeams?: {
    readonly resolver?: Resolver;
    readonly connector?: Connector;
    readonly allowLoopbackForTests?: boolean;
  };
}

/** Paths the provider answers itself (the HTTP app routes these to its Koa callback). */
export const PROVIDER_PATHS: readonly string[] = [
  '/authorize',
  '/token',
  '/register',
  '/revoke',
  '/oauth/jwks',
  '/oauth/userinfo',
  '/oauth/session/end',
  '/.well-known/openid-configuration',
];

export function isProviderPath(pathname: string): boolean {
  return PROVIDER_PATHS.some((p) => pathname === p || pathname.startsWith(`${p}/`));
}

/** Resource indicators a client may send for this server (the MCP URL, or the origin it also serves on). */
function acceptedResources(e: OAuthEndpoints): Set<string> {
  return new Set([e.resource, e.issuer, `${e.issuer}/`, `${e.resource}/`]);
}

export async function createProvider(o: ProviderOptions): Promise<Provider> {
  const { default: ProviderClass, errors } = await import('oidc-provider');
  const jwks = await storedSecret(o.db, 'signing-jwks', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    return {
      keys: [
        { ...privateKey.export({ format: 'jwk' }), kid: randomBytes(8).toString('hex'), alg: 'ES256', use: 'sig' },
      ],
    };
  });
  const cookieKeys = await storedSecret(o.db, 'cookie-keys', () => [randomBytes(32).toString('base64url')]);
  const resources = acceptedResources(o.endpoints);
  const metadataPolicy = {
    allowHttp: false,
    maxUrlLength: 2048,
    allowLoopbackForTests: o.fetchSeams?.allowLoopbackForTests === true,
  };

  const configuration: Configuration = {
    adapter: (name: string) => new KyselyOAuthAdapter(o.db, name) as never,
    clients: [],
    jwks: jwks as Configuration['jwks'],
    cookies: { keys: cookieKeys },
    async findAccount(_ctx, id) {
      const user = await userByName(o.db, id);
      if (!user || user.disabledAt || user.vaultId === null) return undefined;
      return { accountId: user.name, claims: async () => ({ sub: user.name }) };
    },
    scopes: ['openid', 'offline_access', ...RESOURCE_SCOPES],
    claims: { openid: ['sub'] },
    pkce: { required: () => true },
    // The redirect policy is part of the client schema: the provider runs this for every Client it builds
    // (a DCR registration, a fetched metadata document, a stored client loaded for /authorize or /token),
    // so no registered redirect URI outside the policy can ever receive a code — not even the one the
    // provider picks when /authorize leaves redirect_uri out.
    extraClientMetadata: {
      properties: ['redirect_uris'],
      validator(_ctx, key, value) {
        if (key !== 'redirect_uris' || !Array.isArray(value)) return;
        const problems = redirectUrisProblems(value, o);
        // RFC 7591 §3.2.2: the provider answers invalid_redirect_uri for a description that starts so.
        if (problems.length) throw new errors.InvalidClientMetadata(`redirect_uris refused: ${problems.join('; ')}`);
      },
    },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    routes: {
      authorization: '/authorize',
      token: '/token',
      registration: '/register',
      revocation: '/revoke',
      jwks: '/oauth/jwks',
      userinfo: '/oauth/userinfo',
      end_session: '/oauth/session/end',
    },
    interactions: { url: (_ctx, interaction) => `/oauth/interaction/${interaction.uid}` },
    responseTypes: ['code'],
    features: {
      devInteractions: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      registration: { enabled: true },
      revocation: { enabled: true },
      introspection: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => o.endpoints.resource,
        useGrantedResource: () => true,
        getResourceServerInfo(_ctx, resourceIndicator) {
          if (!resources.has(resourceIndicator))
            throw new errors.InvalidTarget(`this server issues tokens only for ${o.endpoints.resource}`);
          return {
            scope: RESOURCE_SCOPES.join(' '),
            audience: o.endpoints.resource,
            accessTokenTTL: o.accessTokenTtlSeconds,
            accessTokenFormat: 'opaque',
          };
        },
      },
      clientIdMetadataDocument: {
        enabled: true,
        ack: 'draft-02',
        cacheDuration: { min: 60, max: 86_400 },
        allowFetch(_ctx: KoaContextWithOIDC, clientId: string) {
          const problem = clientMetadataUrlProblem(clientId, o);
          if (problem) o.log.info({ clientId, problem }, 'client metadata document refused');
          return !problem;
        },
      } as never,
    },
    fetchResponseBodyLimits: { 'client_id metadata document': o.clientMetadataMaxBytes } as never,
    // Every outbound fetch (client metadata documents) goes through the SDK's SSRF rules, pinned to the
    // vetted address, with no redirects.
    async fetch(input: string | URL | Request) {
      const url = input instanceof Request ? input.url : String(input);
      try {
        const got = await fetchUrl(
          String(url),
          {
            resolver: o.fetchSeams?.resolver ?? systemResolver,
            connector: o.fetchSeams?.connector ?? systemConnector(),
            policy: metadataPolicy,
          },
          { maxBytes: o.clientMetadataMaxBytes, timeoutMs: o.clientMetadataTimeoutMs, maxRedirects: 0 },
        );
        const headers = new Headers({
          'content-type': got.contentType ?? 'application/json',
          'content-length': String(got.bytes.length),
        });
        if (got.cacheControl) headers.set('cache-control', got.cacheControl);
        return new Response(new Uint8Array(got.bytes), { status: 200, headers });
      } catch (e) {
        o.log.info({ url: String(url), err: (e as Error).message }, 'client metadata document fetch refused');
        throw e;
      }
    },
    ttl: {
      AccessToken: o.accessTokenTtlSeconds,
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 14 * 86_400,
      IdToken: 3600,
      Grant: Math.max(o.refreshTokenTtlSeconds * 4, 365 * 86_400),
      RefreshToken: o.refreshTokenTtlSeconds,
    },
    rotateRefreshToken: true,
    async issueRefreshToken(_ctx, client) {
      return client.grantTypeAllowed('refresh_token');
    },
    async loadExistingGrant(ctx) {
      // Only the grant the user just consented to counts: every authorization asks again (no silent re-grant).
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(String(grantId)) : undefined;
    },
    async renderError(ctx, out) {
      ctx.type = 'html';
      ctx.set('content-security-policy', "default-src 'none'; frame-ancestors 'none'; base-uri 'none'");
      ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in error</title></head><body><main><h1>This request cannot continue</h1><p><code>${escapeHtml(String(out.error))}</code>: ${escapeHtml(String(out.error_description ?? ''))}</p></main></body></html>`;
    },
  };

  const provider = new ProviderClass(o.endpoints.issuer, configuration);
  provider.proxy = true;
  // Redirect rules the provider does not know: https only, loopback http, the operator's host list.
  provider.use(async (ctx, next) => {
    // A client that asks for no scope asks for reading (OAuth 2.1 §3.2.2.1: the server's documented default).
    if (ctx.path === '/authorize' && ctx.method === 'GET' && !ctx.query.scope)
      ctx.query = { ...ctx.query, scope: SCOPE_READ };
    if (ctx.path === '/authorize' && typeof ctx.query.redirect_uri === 'string') {
      const problem = redirectUriProblem(ctx.query.redirect_uri, o);
      if (problem) {
        ctx.status = 400;
        ctx.type = 'html';
        ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Redirect refused</title></head><body><main><h1>Redirect refused</h1><p>${escapeHtml(problem)}</p></main></body></html>`;
        return;
      }
    }
    await next();
  });
  provider.on('server_error', (_ctx, err) => o.log.error({ err: err.stack ?? err.message }, 'oauth server error'));
  return provider;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
