// Local sign-in secrets for the OAuth consent flow: argon2id password hashes (memory-hard, from
// @node-rs/argon2) and one-time sign-in links (SHA-256 at rest, short-lived, used once). Never logs
// or stores a password or a raw link token.
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { hash, verify } from '@node-rs/argon2';

/** A fixed hash verified when the user is unknown, so a miss costs as long as a wrong password. */
let decoy: string | undefined;

export async function setPassword(db: Kysely<any>, userId: number, password: string): Promise<void> {
  await db
    .updateTable('users')
    .set({ password_hash: await hash(password) })
    .where('id', '=', userId)
    .execute();
}

/** The user's name when `password` is theirs and they may sign in; undefined otherwise (same cost either way). */
export async function checkPassword(db: Kysely<any>, name: string, password: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('users')
    .select(['name', 'password_hash', 'disabled_at', 'vault_id'])
    .where('name', '=', name)
    .executeTakeFirst();
  decoy ??= await hash(randomBytes(16).toString('hex'));
  const stored = row?.password_hash ?? decoy;
  const ok = await verify(stored, password).catch(() => false);
  if (!ok || !row?.password_hash || row.disabled_at || row.vault_id === null) return undefined;
  return row.name as string;
}

function tokenHash(raw: string): string {
  return createHash('sha256').update(raw).digest('hex');
}

/** Mint a one-time sign-in token for a user; the raw token is returned once and never stored. */
export async function createSignInLink(
  db: Kysely<any>,
  userId: number,
  ttlSeconds: number,
): Promise<{ token: string; expiresAt: Date }> {
  const token = `exs_${randomBytes(24).toString('base64url')}`;
  const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
  await db
    .insertInto('sign_in_links')
    .values({ token_hash: tokenHash(token), user_id: userId, expires_at: expiresAt })
    .execute();
  return { token, expiresAt };
}

/** Spend a sign-in token: the user's name when it is valid, unused and unexpired (it is then used up). */
export async function useSignInLink(db: Kysely<any>, token: string): Promise<string | undefined> {
  if (!/^exs_[A-Za-z0-9_-]{20,64}$/.test(token)) return undefined;
  const spent = await db
    .updateTable('sign_in_links')
    .set({ used_at: new Date() })
    .where('token_hash', '=', tokenHash(token))
    .where('used_at', 'is', null)
    .where('expires_at', '>', new Date())
    .returning('user_id')
    .executeTakeFirst();
  if (!spent) return undefined;
  const user = await db
    .selectFrom('users')
    .select(['name', 'disabled_at', 'vault_id'])
    .where('id', '=', spent.user_id)
    .executeTakeFirst();
  if (!user || user.disabled_at || user.vault_id === null) return undefined;
  return user.name as string;
}
