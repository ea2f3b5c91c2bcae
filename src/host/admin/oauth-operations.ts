// Operator commands on OAuth state (`exocortex oauth clients|grants list|revoke`, `users passwd`,
// `users login-link`), over whatever owns the database. Revoking a grant deletes its tokens, so the
// next request with any of them is refused. Nothing here writes to the terminal.
import { sql, type Kysely } from 'kysely';
import { createSignInLink, setPassword } from '../auth/passwords.js';
import { userByName } from '../auth/users.js';
import { revokeGrant } from '../oauth/adapter.js';
import type { Settings } from '../settings/load.js';
import { refused } from './account-operations.js';
import { OperationError } from './errors.js';

export interface OAuthTarget {
  readonly db: Kysely<any>;
  readonly settings: Settings;
  /** Close the open MCP sessions and listen streams of these credentials (only in a running server). */
  closeSessionsOf?(credentialIds: ReadonlySet<string>): Promise<number>;
}

export interface ClientView {
  readonly clientId: string;
  readonly name: string;
  readonly registration: 'dcr' | 'metadata-document';
  readonly redirectUris: readonly string[];
  readonly grants: number;
  readonly createdAt: string | null;
}

export interface GrantView {
  readonly id: string;
  readonly user: string;
  readonly clientId: string;
  readonly scopes: string;
  readonly createdAt: string;
  readonly expiresAt: string | null;
}

function parse(payload: unknown): Record<string, any> {
  return (typeof payload === 'string' ? JSON.parse(payload) : payload) as Record<string, any>;
}

export async function oauthGrantsListOp(t: OAuthTarget): Promise<GrantView[]> {
  const rows = await t.db
    .selectFrom('oauth_records')
    .select(['id', 'payload', 'created_at', 'expires_at'])
    .where('model', '=', 'Grant')
    .orderBy('created_at')
    .execute();
  return rows.map((r) => {
    const p = parse(r.payload);
    const scopes = new Set<string>();
    for (const s of Object.values((p.resources ?? {}) as Record<string, string>))
      for (const x of s.split(' ')) if (x) scopes.add(x);
    return {
      id: r.id,
      user: String(p.accountId),
      clientId: String(p.clientId),
      scopes: [...scopes].join(' '),
      createdAt: new Date(r.created_at).toISOString(),
      expiresAt: r.expires_at ? new Date(r.expires_at).toISOString() : null,
    };
  });
}

export async function oauthGrantsRevokeOp(t: OAuthTarget, id: string): Promise<{ revoked: string; rows: number }> {
  const grant = await t.db
    .selectFrom('oauth_records')
    .select('id')
    .where('model', '=', 'Grant')
    .where('id', '=', id)
    .executeTakeFirst();
  if (!grant) throw new OperationError('not_found', `no grant "${id}"; see exocortex oauth grants list`);
  const rows = await revokeGrant(t.db, id);
  // Requests re-check the token anyway; this ends the sessions and listen streams that would outlive it.
  await t.closeSessionsOf?.(new Set([`oauth:${id}`]));
  return { revoked: id, rows };
}

/** Registered (DCR) clients, and metadata-document clients that hold grants (those are fetched, not stored). */
export async function oauthClientsListOp(t: OAuthTarget): Promise<ClientView[]> {
  const grants = await oauthGrantsListOp(t);
  const count = new Map<string, number>();
  for (const g of grants) count.set(g.clientId, (count.get(g.clientId) ?? 0) + 1);
  const rows = await t.db
    .selectFrom('oauth_records')
    .select(['id', 'payload', 'created_at'])
    .where('model', '=', 'Client')
    .orderBy('created_at')
    .execute();
  const out: ClientView[] = rows.map((r) => {
    const p = parse(r.payload);
    return {
      clientId: r.id,
      name: String(p.client_name ?? r.id),
      registration: 'dcr',
      redirectUris: (p.redirect_uris ?? []) as string[],
      grants: count.get(r.id) ?? 0,
      createdAt: new Date(r.created_at).toISOString(),
    };
  });
  const known = new Set(out.map((c) => c.clientId));
  for (const [clientId, n] of count) {
    if (!known.has(clientId) && clientId.startsWith('https://'))
      out.push({
        clientId,
        name: clientId,
        registration: 'metadata-document',
        redirectUris: [],
        grants: n,
        createdAt: null,
      });
  }
  return out;
}

/** Remove a client and every grant (and token) it holds; a DCR client must register again. */
export async function oauthClientsRevokeOp(
  t: OAuthTarget,
  clientId: string,
): Promise<{ revoked: string; grants: number }> {
  const grantIds = (
    await t.db
      .selectFrom('oauth_records')
      .select('id')
      .where('model', '=', 'Grant')
      .where(sql<string>`payload->>'clientId'`, '=', clientId)
      .execute()
  ).map((r) => r.id as string);
  const client = await t.db
    .deleteFrom('oauth_records')
    .where('model', '=', 'Client')
    .where('id', '=', clientId)
    .executeTakeFirst();
  if (Number(client.numDeletedRows) === 0 && grantIds.length === 0)
    throw new OperationError('not_found', `no client "${clientId}"; see exocortex oauth clients list`);
  for (const id of grantIds) await revokeGrant(t.db, id);
  await t.closeSessionsOf?.(new Set(grantIds.map((id) => `oauth:${id}`)));
  return { revoked: clientId, grants: grantIds.length };
}

/** Set a user's sign-in password (hashed with argon2id; the password itself is never stored). */
export async function usersPasswdOp(
  t: OAuthTarget,
  input: { name: string; password: string },
): Promise<{ user: string }> {
  const user = await userByName(t.db, String(input.name ?? ''));
  if (!user) throw refused('unknown_user', { user: String(input.name ?? '') });
  const password = String(input.password ?? '');
  if (password.length < 10 || password.length > 1024)
    throw new OperationError('invalid_arguments', 'a password is 10 to 1024 characters');
  await setPassword(t.db, user.id, password);
  return { user: user.name };
}

/** Mint a one-time sign-in code for a user, valid oauth.signInLinkTtlSeconds, shown once. */
export async function usersLoginLinkOp(
  t: OAuthTarget,
  name: string,
): Promise<{ user: string; code: string; expiresAt: string }> {
  const user = await userByName(t.db, name);
  if (!user) throw refused('unknown_user', { user: name });
  if (user.disabledAt)
    throw new OperationError('invalid_arguments', `the user "${name}" is disabled; no sign-in code was minted`);
  const { token, expiresAt } = await createSignInLink(t.db, user.id, t.settings.host.oauth.signInLinkTtlSeconds);
  return { user: user.name, code: token, expiresAt: expiresAt.toISOString() };
}
