// The resource-server side: an OAuth access token (opaque, looked up on every request, so a revoked
// grant is refused at once) becomes a Principal of the same model as an API key — the token's user,
// that user's vault, and scopes mapped onto the key scopes. Audience, expiry and grant are checked here.
import type { Kysely } from 'kysely';
import type Provider from 'oidc-provider';
import { Refusal } from '../../sdk/refusals.js';
import type { Principal } from '../../sdk/types.js';
import type { Scope } from '../../sdk/scopes.js';
import { userByName } from '../auth/users.js';
import { SCOPE_READ, SCOPE_WRITE, type OAuthEndpoints } from './provider.js';

/** What the resource metadata and challenges name. */
export function resourceMetadata(e: OAuthEndpoints, path: '' | '/mcp'): Record<string, unknown> {
  return {
    resource: path === '/mcp' ? e.resource : `${e.issuer}/`,
    authorization_servers: [e.issuer],
    scopes_supported: [SCOPE_READ, SCOPE_WRITE],
    bearer_methods_supported: ['header'],
    resource_name: 'Exocortex',
  };
}

/** The WWW-Authenticate challenge of a 401 or 403 for a request to `path`. */
export function bearerChallenge(
  e: OAuthEndpoints,
  path: string,
  extra: { error?: string; scope?: string; description?: string } = {},
): string {
  const metadataPath =
    path === '/mcp' || path.startsWith('/mcp?') || path.startsWith('/mcp/')
      ? '/.well-known/oauth-protected-resource/mcp'
      : '/.well-known/oauth-protected-resource';
  const parts = [
    `resource_metadata="${e.issuer}${metadataPath}"`,
    `scope="${extra.scope ?? `${SCOPE_READ} ${SCOPE_WRITE}`}"`,
  ];
  if (extra.error) parts.unshift(`error="${extra.error}"`);
  if (extra.description) parts.push(`error_description="${extra.description.replace(/["\\]/g, '')}"`);
  return `Bearer ${parts.join(', ')}`;
}

export function scopesOf(tokenScope: string): Scope[] {
  const granted = new Set(tokenScope.split(' ').filter(Boolean));
  if (granted.has(SCOPE_WRITE)) return ['read', 'readwrite'];
  if (granted.has(SCOPE_READ)) return ['read'];
  return [];
}

/** How many client names the verifier remembers (a cache: one adapter read per client otherwise). */
const CLIENT_NAMES_MAX = 1000;

export class AccessTokenVerifier {
  constructor(
    private readonly provider: Provider,
    private readonly db: Kysely<any>,
    private readonly endpoints: OAuthEndpoints,
    private readonly now: () => number = Date.now,
  ) {}

  /** Registered client names by id (a client's name does not change after registration); bounded. */
  private readonly names = new Map<string, string>();

  /** The client's registered name (client_name), or its id when it gave none or is gone. */
  private async clientName(clientId: string): Promise<string> {
    const known = this.names.get(clientId);
    if (known !== undefined) return known;
    const client = await this.provider.Client.find(clientId).catch(() => undefined);
    const raw = client?.clientName;
    const name = typeof raw === 'string' && raw.trim() ? raw.trim().slice(0, 200) : clientId;
    if (this.names.size >= CLIENT_NAMES_MAX) this.names.delete(this.names.keys().next().value as string);
    this.names.set(clientId, name);
    return name;
  }

  async verify(raw: string): Promise<Principal> {
    if (raw.length > 512) throw new Refusal('unauthenticated');
    const token = await this.provider.AccessToken.find(raw);
    if (!token) throw new Refusal('unauthenticated', {}, 'This access token is unknown, revoked or expired.');
    if (token.isExpired || (token.exp ?? 0) * 1000 <= this.now())
      throw new Refusal('unauthenticated', {}, 'This access token has expired.');
    const aud = Array.isArray(token.aud) ? token.aud : [token.aud];
    if (!aud.includes(this.endpoints.resource))
      throw new Refusal('unauthenticated', {}, `This access token was not issued for ${this.endpoints.resource}.`);
    if (!token.grantId || !(await this.provider.Grant.find(token.grantId)))
      throw new Refusal('unauthenticated', {}, 'The grant of this access token was revoked.');
    const user = await userByName(this.db, token.accountId);
    if (!user || user.disabledAt)
      throw new Refusal('unauthenticated', {}, 'The user this access token belongs to is disabled.');
    if (user.vaultId === null)
      throw new Refusal('unauthenticated', {}, 'The user this access token belongs to is bound to no vault.');
    const client = { id: String(token.clientId), name: await this.clientName(String(token.clientId)) };
    return {
      kind: 'oauth',
      id: `oauth:${token.grantId}`,
      // The client's registered name and id: change events and audit rows carry it as the actor's name.
      name: client.name === client.id ? `oauth client ${client.id}` : `${client.name} (oauth client ${client.id})`,
      client,
      user: user.name,
      vaultId: user.vaultId,
      scopes: scopesOf(token.scope ?? ''),
      expiresAt: (token.exp ?? 0) * 1000,
    };
  }
}
