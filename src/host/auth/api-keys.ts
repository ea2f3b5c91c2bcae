// API keys: minting (raw key shown once), SHA-256 storage, listing, revocation, and verification
// into a Principal with a short cache. Never logs or stores a raw key.
import { hash, randomBytes, randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { Refusal } from '../../sdk/refusals.js';
import type { Principal } from '../../sdk/types.js';
import type { Scope } from '../../sdk/scopes.js';

export const KEY_PREFIX = 'exo_';

export interface ApiKeyRecord {
  readonly id: string;
  readonly name: string;
  readonly prefix: string;
  readonly scope: Scope;
  readonly vaultId: number;
  readonly isAdmin: boolean;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
  readonly lastUsedAt: Date | null;
  /** The user the key belongs to (null only for rows older than users that no start has adopted yet). */
  readonly userName: string | null;
  /** The user's vault, which the key serves; null when the user's vault was removed. */
  readonly userVaultId: number | null;
  readonly userDisabledAt: Date | null;
}

/** The stored form of a key. One-shot `hash`: every HTTP request hashes its key, and a Hash object costs more. */
export function hashKey(raw: string): string {
  return hash('sha256', raw, 'hex');
}

export async function createApiKey(
  db: Kysely<any>,
  input: { name: string; scope: Scope; vaultId: number; userId?: number; expiresAt?: Date | null; isAdmin?: boolean },
): Promise<{ raw: string; record: ApiKeyRecord }> {
  const raw = KEY_PREFIX + randomBytes(32).toString('base64url');
  const id = randomUUID();
  const userId = input.userId ?? (await operatorOf(db, input.vaultId));
  await db
    .insertInto('api_keys')
    .values({
      id,
      name: input.name,
      key_hash: hashKey(raw),
      key_prefix: raw.slice(0, 10),
      scope: input.scope,
      vault_id: input.vaultId,
      user_id: userId,
      is_admin: input.isAdmin ?? false,
      expires_at: input.expiresAt ?? null,
    })
    .execute();
  const row = await withUser(db).where('k.id', '=', id).executeTakeFirstOrThrow();
  // Every process re-reads keys and limits: none refuses the new key from a cached miss.
  await notifyCredentialsChanged(db);
  return { raw, record: toRecord(row) };
}

/** A key minted for a vault without naming a user belongs to that vault's first enabled user. */
async function operatorOf(db: Kysely<any>, vaultId: number): Promise<number | null> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('vault_id', '=', vaultId)
    .where('disabled_at', 'is', null)
    .orderBy('id')
    .executeTakeFirst();
  return row ? Number(row.id) : null;
}

/** api_keys rows with their user's name, vault and state. */
function withUser(db: Kysely<any>) {
  return db
    .selectFrom('api_keys as k')
    .leftJoin('users as u', 'u.id', 'k.user_id')
    .selectAll('k')
    .select(['u.name as user_name', 'u.vault_id as user_vault_id', 'u.disabled_at as user_disabled_at']);
}

export async function listApiKeys(db: Kysely<any>): Promise<ApiKeyRecord[]> {
  const rows = await withUser(db).orderBy('k.created_at').execute();
  return rows.map(toRecord);
}

export async function countActiveKeys(db: Kysely<any>): Promise<number> {
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * The first start's admin key, minted only when no active key exists. Processes starting at once on one
 * PostgreSQL server take turns on a transaction lock, so only the first of them mints one.
 */
export async function mintFirstAdminKey(db: Kysely<any>, vaultId: number): Promise<string | undefined> {
  return db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${FIRST_KEY_LOCK})`.execute(trx);
    if ((await countActiveKeys(trx)) > 0) return undefined;
    return (await createApiKey(trx, { name: 'admin', scope: 'readwrite', vaultId, isAdmin: true })).raw;
  });
}

/** The transaction lock of mintFirstAdminKey (a one-key advisory lock, apart from the vault leases' space). */
const FIRST_KEY_LOCK = 0x4578_6f00;

/**
 * Tell every process sharing the database that credentials changed (delivered at commit when `db` is a
 * transaction): each drops its key cache, re-reads limits, and closes the sessions and listen streams of
 * the credentials named in `close` (chunked under NOTIFY's 8000-byte payload).
 */
export async function notifyCredentialsChanged(db: Kysely<any>, close: readonly string[] = []): Promise<void> {
  if (close.length === 0) {
    await sql`SELECT pg_notify(${KEYS_CHANGED_CHANNEL}, '')`.execute(db);
    return;
  }
  for (let i = 0; i < close.length; i += NOTIFY_IDS_PER_PAYLOAD) {
    const payload = JSON.stringify({ close: close.slice(i, i + NOTIFY_IDS_PER_PAYLOAD) });
    await sql`SELECT pg_notify(${KEYS_CHANGED_CHANNEL}, ${payload})`.execute(db);
  }
}

/** Credential ids (uuids, or oauth:<grant>) per NOTIFY payload: well under 8000 bytes. */
const NOTIFY_IDS_PER_PAYLOAD = 100;

/** The credential ids a KEYS_CHANGED payload asks every process to close sessions of (none: flush only). */
export function closedCredentials(payload: string | undefined): string[] {
  if (!payload) return [];
  try {
    const ids = (JSON.parse(payload) as { close?: unknown }).close;
    return Array.isArray(ids) ? ids.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

/** The NOTIFY channel on which a revocation tells every process sharing the database to drop its cache. */
export const KEYS_CHANGED_CHANNEL = 'exo_api_keys_changed';

/** Revoke by id, name or key prefix. Returns how many keys were revoked. */
/** Revoke the active keys matching an id, name or prefix; returns the ids revoked. */
/**
 * Revoke the active keys `which` names (id, name or prefix; only the id with `exact`), of one user's when
 * `userName` is given (the panel revokes a non-admin's own keys so).
 */
export async function revokeApiKey(
  db: Kysely<any>,
  which: string,
  only: { exact?: boolean; userName?: string } = {},
): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    let query = trx
      .updateTable('api_keys')
      .set({ revoked_at: new Date() })
      .where('revoked_at', 'is', null)
      .where((eb) =>
        only.exact
          ? eb('id', '=', which)
          : eb.or([eb('id', '=', which), eb('name', '=', which), eb('key_prefix', '=', which)]),
      );
    if (only.userName !== undefined) {
      const userName = only.userName;
      query = query.where('user_id', 'in', trx.selectFrom('users').select('id').where('name', '=', userName));
    }
    const rows = await query.returning('id').execute();
    // Delivered at commit to every listening process (src/host/host.ts): none serves the key from its
    // cache, and each closes the sessions and listen streams the key holds there.
    if (rows.length > 0)
      await notifyCredentialsChanged(
        trx,
        rows.map((r) => String(r.id)),
      );
    return rows.map((r) => String(r.id));
  });
}

function toRecord(row: any): ApiKeyRecord {
  return {
    id: row.id,
    name: row.name,
    prefix: row.key_prefix,
    scope: row.scope,
    vaultId: row.vault_id,
    isAdmin: row.is_admin,
    createdAt: new Date(row.created_at),
    expiresAt: row.expires_at ? new Date(row.expires_at) : null,
    revokedAt: row.revoked_at ? new Date(row.revoked_at) : null,
    lastUsedAt: row.last_used_at ? new Date(row.last_used_at) : null,
    userName: row.user_name ?? null,
    userVaultId:
      row.user_id === null || row.user_id === undefined
        ? row.vault_id
        : row.user_vault_id === null
          ? null
          : Number(row.user_vault_id),
    userDisabledAt: row.user_disabled_at ? new Date(row.user_disabled_at) : null,
  };
}

export function principalFromKey(record: ApiKeyRecord): Principal {
  return {
    kind: 'api_key',
    id: record.id,
    name: record.name,
    user: record.userName ?? (record.isAdmin ? 'admin' : record.name),
    // The user's binding decides the vault, so a key can never serve another vault than its user's.
    vaultId: record.userVaultId ?? record.vaultId,
    scopes: record.scope.split(' ').filter(Boolean),
    expiresAt: record.expiresAt?.getTime(),
  };
}

/** Verifies bearer keys against the table, caching hits and misses for a few seconds. */
export class ApiKeyVerifier {
  private readonly cache = new Map<string, { at: number; record: ApiKeyRecord | null }>();

  constructor(
    private readonly db: Kysely<any>,
    private readonly cacheMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async verify(raw: string | undefined): Promise<Principal> {
    if (!raw || !raw.startsWith(KEY_PREFIX) || raw.length > 200) throw new Refusal('unauthenticated');
    const hash = hashKey(raw);
    const t = this.now();
    let hit = this.cache.get(hash);
    if (!hit || t - hit.at > this.cacheMs) {
      const row = await withUser(this.db).where('k.key_hash', '=', hash).executeTakeFirst();
      hit = { at: t, record: row ? toRecord(row) : null };
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(hash, hit);
      if (row)
        void this.db
          .updateTable('api_keys')
          .set({ last_used_at: new Date(t) })
          .where('id', '=', row.id)
          .execute()
          .catch(() => undefined);
    }
    const rec = hit.record;
    if (!rec) throw new Refusal('unauthenticated');
    if (rec.revokedAt) throw new Refusal('unauthenticated', {}, 'This API key has been revoked.');
    if (rec.expiresAt && rec.expiresAt.getTime() <= t)
      throw new Refusal('unauthenticated', {}, 'This API key has expired.');
    if (rec.userDisabledAt) throw new Refusal('unauthenticated', {}, 'The user this API key belongs to is disabled.');
    if (rec.userVaultId === null)
      throw new Refusal('unauthenticated', {}, 'The user this API key belongs to is bound to no vault.');
    return principalFromKey(rec);
  }

  forget(): void {
    this.cache.clear();
  }
}

/** Parse `--expires` values: an ISO date, or a duration like 30d, 12h, 90m. */
export function parseExpiry(value: string, now = new Date()): Date {
  const m = /^(\d+)\s*([dhm])$/.exec(value.trim());
  if (m) {
    const n = Number(m[1]);
    const unit = m[2] === 'd' ? 86_400_000 : m[2] === 'h' ? 3_600_000 : 60_000;
    return new Date(now.getTime() + n * unit);
  }
  const d = new Date(value);
  if (Number.isNaN(d.getTime()))
    throw new Error(`--expires "${value}" is neither a date (2027-01-31) nor a duration (30d, 12h, 90m)`);
  if (d.getTime() <= now.getTime()) throw new Error(`--expires "${value}" is in the past`);
  return d;
}
