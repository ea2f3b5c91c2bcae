// The users table: a person (or agent) bound to exactly one vault, owning API keys; disabling one
// refuses every key of theirs at once (the same NOTIFY as a revocation clears every verifier cache).
import { sql, type Kysely } from 'kysely';
import { KEYS_CHANGED_CHANNEL } from './api-keys.js';
import type { Source } from './vaults.js';
import type { UserLimitsOverride } from '../settings/schema.js';

/** The user single-user mode runs as: bound to `vault.path`, made by the host, never by hand. */
export const OPERATOR_USER = 'operator';

export interface UserRow {
  readonly id: number;
  readonly name: string;
  readonly vaultId: number | null;
  readonly vaultName: string | null;
  readonly isAdmin: boolean;
  readonly source: Source;
  readonly disabledAt: Date | null;
  /** This user's own limits over the operator's admission.perUser defaults (keys it does not set are absent). */
  readonly limits: UserLimitsOverride;
}

const columns = [
  'u.id',
  'u.name',
  'u.vault_id',
  'v.name as vault_name',
  'u.is_admin',
  'u.source',
  'u.disabled_at',
  'u.limits',
] as const;

export async function listUsers(db: Kysely<any>): Promise<UserRow[]> {
  const rows = await db
    .selectFrom('users as u')
    .leftJoin('vaults as v', 'v.id', 'u.vault_id')
    .select(columns)
    .orderBy('u.id')
    .execute();
  return rows.map(toUser);
}

export async function userByName(db: Kysely<any>, name: string): Promise<UserRow | undefined> {
  const row = await db
    .selectFrom('users as u')
    .leftJoin('vaults as v', 'v.id', 'u.vault_id')
    .select(columns)
    .where('u.name', '=', name)
    .executeTakeFirst();
  return row ? toUser(row) : undefined;
}

/** Enabled users bound to a vault, by name. */
export async function usersOfVault(db: Kysely<any>, vaultId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('users')
    .select('name')
    .where('vault_id', '=', vaultId)
    .where('disabled_at', 'is', null)
    .orderBy('name')
    .execute();
  return rows.map((r) => r.name as string);
}

export async function insertUser(
  db: Kysely<any>,
  u: { name: string; vaultId: number; isAdmin: boolean; source: Source; limits?: UserLimitsOverride },
): Promise<UserRow> {
  await db
    .insertInto('users')
    .values({
      name: u.name,
      vault_id: u.vaultId,
      is_admin: u.isAdmin,
      source: u.source,
      limits: JSON.stringify(u.limits ?? {}),
    })
    .execute();
  return (await userByName(db, u.name))!;
}

export async function updateUser(
  db: Kysely<any>,
  id: number,
  set: { vaultId?: number; isAdmin?: boolean; source?: Source; disabled?: boolean; limits?: UserLimitsOverride },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('users')
      .set({
        ...(set.vaultId !== undefined ? { vault_id: set.vaultId } : {}),
        ...(set.isAdmin !== undefined ? { is_admin: set.isAdmin } : {}),
        ...(set.source !== undefined ? { source: set.source } : {}),
        ...(set.disabled !== undefined ? { disabled_at: set.disabled ? new Date() : null } : {}),
        ...(set.limits !== undefined ? { limits: JSON.stringify(set.limits) } : {}),
      })
      .where('id', '=', id)
      .execute();
    if (set.disabled) await trx.deleteFrom('panel_sessions').where('user_id', '=', id).execute();
    await notifyKeysChanged(trx);
  });
}

/** Disable users by id (their keys are refused from the next request on). */
export async function disableUsers(db: Kysely<any>, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('users')
      .set({ disabled_at: new Date() })
      .where('id', 'in', [...ids])
      .where('disabled_at', 'is', null)
      .execute();
    // Their panel sign-ins end too (the panel also re-checks the user on every request).
    await trx
      .deleteFrom('panel_sessions')
      .where('user_id', 'in', [...ids])
      .execute();
    await notifyKeysChanged(trx);
  });
}

/**
 * The implicit operator user, bound to the vault.path vault (rebound when vault.name changed). Existing
 * keys without a user belong to it.
 */
export async function ensureOperator(db: Kysely<any>, vaultId: number): Promise<number> {
  const existing = await db
    .selectFrom('users')
    .select(['id', 'vault_id'])
    .where('name', '=', OPERATOR_USER)
    .executeTakeFirst();
  let id: number;
  if (existing) {
    id = Number(existing.id);
    if (Number(existing.vault_id) !== vaultId)
      await db.updateTable('users').set({ vault_id: vaultId }).where('id', '=', id).execute();
  } else {
    // Two processes starting at once on one server: the second insert yields to the first.
    const row = await db
      .insertInto('users')
      .values({ name: OPERATOR_USER, vault_id: vaultId, is_admin: true, source: 'implicit' })
      .onConflict((oc) => oc.column('name').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!row) return ensureOperator(db, vaultId);
    id = Number(row.id);
  }
  await db.updateTable('api_keys').set({ user_id: id }).where('user_id', 'is', null).execute();
  return id;
}

/** Delivered at commit to every process sharing the database, so none serves a key from its cache. */
async function notifyKeysChanged(db: Kysely<any>): Promise<void> {
  await sql`SELECT pg_notify(${KEYS_CHANGED_CHANNEL}, '')`.execute(db);
}

function toUser(r: any): UserRow {
  return {
    id: Number(r.id),
    name: r.name,
    vaultId: r.vault_id === null ? null : Number(r.vault_id),
    vaultName: r.vault_name ?? null,
    isAdmin: r.is_admin === true,
    source: r.source,
    disabledAt: r.disabled_at ? new Date(r.disabled_at) : null,
    limits: (typeof r.limits === 'string' ? JSON.parse(r.limits) : r.limits) ?? {},
  };
}
