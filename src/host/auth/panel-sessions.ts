// Panel sign-in sessions, kept server-side in panel_sessions: the cookie carries a random secret, the
// table its SHA-256. A session is valid while unexpired AND its user is enabled and bound to a vault,
// checked on every request, so disabling a user (here, in the CLI or in the config file) ends it at once.
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';

export const SESSION_COOKIE = 'exo_panel';

export interface PanelUser {
  readonly id: number;
  readonly name: string;
  readonly admin: boolean;
  readonly vaultId: number;
  readonly vaultName: string;
}

function hashOf(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Start a session for a user; the raw secret goes into the cookie and is never stored. */
export async function createSession(
  db: Kysely<any>,
  userName: string,
  ttlSeconds: number,
): Promise<{ secret: string; expiresAt: Date } | undefined> {
  const user = await db.selectFrom('users').select('id').where('name', '=', userName).executeTakeFirst();
  if (!user) return undefined;
  const secret = randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
  await db
    .insertInto('panel_sessions')
    .values({ token_hash: hashOf(secret), user_id: user.id, expires_at: expiresAt })
    .execute();
  // Expired rows of anyone are swept here, so the table never grows past the live sessions and a day's sign-ins.
  await db.deleteFrom('panel_sessions').where('expires_at', '<', new Date()).execute();
  return { secret, expiresAt };
}

/** The signed-in user of a cookie secret, or undefined (unknown, expired, user disabled or bound to no vault). */
export async function sessionUser(db: Kysely<any>, secret: string | undefined): Promise<PanelUser | undefined> {
  if (!secret || !/^[A-Za-z0-9_-]{43}$/.test(secret)) return undefined;
  const row = await db
    .selectFrom('panel_sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .innerJoin('vaults as v', 'v.id', 'u.vault_id')
    .select(['u.id', 'u.name', 'u.is_admin', 'u.vault_id', 'v.name as vault_name'])
    .where('s.token_hash', '=', hashOf(secret))
    .where('s.expires_at', '>', new Date())
    .where('u.disabled_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    id: Number(row.id),
    name: String(row.name),
    admin: row.is_admin === true,
    vaultId: Number(row.vault_id),
    vaultName: String(row.vault_name),
  };
}

export async function endSession(db: Kysely<any>, secret: string | undefined): Promise<void> {
  if (secret) await db.deleteFrom('panel_sessions').where('token_hash', '=', hashOf(secret)).execute();
}

/** End every panel session of a user (signing out everywhere; disabling a user does it in users.ts). */
export async function endSessionsOf(db: Kysely<any>, userId: number): Promise<number> {
  const r = await db.deleteFrom('panel_sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(r.numDeletedRows);
}
