// Link rows: mint (token hashed), the conditional claim, completion, release, consumption and lookups.
// The only module that writes transfer_links; never sees or stores a raw token except to hash it.
import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Database } from '../../src/sdk/index.js';

export type LinkKind = 'upload' | 'download';
export type LinkState = 'pending' | 'claimed' | 'completed' | 'consumed' | 'revoked';

/** What an overwrite upload or a download is bound to: the incumbent's identity and bytes at mint. */
export interface Fingerprint {
  /** statx mount id: with ino, a swap for a same-inode file on another mount is caught (0 = unknown). */
  readonly mountId?: number;
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  readonly hash: string;
}

export interface UploadResult {
  readonly size: number;
  readonly sha256: string;
  readonly mime: string;
}

export interface LinkRow {
  readonly id: string;
  readonly kind: LinkKind;
  readonly vaultId: number;
  readonly principalKind: string;
  readonly principalId: string;
  readonly path: string;
  readonly overwrite: boolean;
  readonly pinned: Fingerprint | null;
  readonly maxBytes: number;
  readonly state: LinkState;
  readonly createdAt: Date;
  readonly expiresAt: Date;
  readonly claimedAt: Date | null;
  readonly completedAt: Date | null;
  readonly result: UploadResult | null;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;
export const ID_RE = /^[A-Za-z0-9_-]{22}$/;

function toRow(r: Record<string, any>): LinkRow {
  const json = <T>(v: unknown): T | null =>
    v === null || v === undefined ? null : typeof v === 'string' ? (JSON.parse(v) as T) : (v as T);
  return {
    id: r.id,
    kind: r.kind,
    vaultId: Number(r.vault_id),
    principalKind: r.principal_kind,
    principalId: r.principal_id,
    path: r.path,
    overwrite: Boolean(r.overwrite),
    pinned: json<Fingerprint>(r.pinned),
    maxBytes: Number(r.max_bytes),
    state: r.state,
    createdAt: new Date(r.created_at),
    expiresAt: new Date(r.expires_at),
    claimedAt: r.claimed_at ? new Date(r.claimed_at) : null,
    completedAt: r.completed_at ? new Date(r.completed_at) : null,
    result: json<UploadResult>(r.result),
  };
}

/** What minting a link needs: the row's own fields, plus the time it is minted at. */
export type MintInput = Pick<
  LinkRow,
  'kind' | 'vaultId' | 'principalKind' | 'principalId' | 'path' | 'overwrite' | 'pinned' | 'maxBytes' | 'expiresAt'
> & {
  readonly now: Date;
};

export class LinkStore {
  constructor(private readonly db: Database) {}

  /** Create a link; returns its public id and the raw token (shown once, stored only hashed). */
  async mint(m: MintInput): Promise<{ id: string; token: string }> {
    const token = randomBytes(32).toString('base64url');
    const id = randomBytes(16).toString('base64url');
    await this.db
      .insertInto('transfer_links')
      .values({
        id,
        token_hash: hashToken(token),
        kind: m.kind,
        vault_id: m.vaultId,
        principal_kind: m.principalKind,
        principal_id: m.principalId,
        path: m.path,
        overwrite: m.overwrite,
        pinned: m.pinned ? JSON.stringify(m.pinned) : null,
        max_bytes: m.maxBytes,
        state: 'pending',
        created_at: m.now,
        expires_at: m.expiresAt,
      })
      .execute();
    return { id, token };
  }

  /** Forget links that expired more than `retainMs` ago (check_upload answers not_found for them after). */
  async sweep(now: Date, retainMs: number): Promise<number> {
    const r = await this.db
      .deleteFrom('transfer_links')
      .where('expires_at', '<', new Date(now.getTime() - retainMs))
      .where('state', '!=', 'claimed')
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async byToken(token: string, kind: LinkKind): Promise<LinkRow | undefined> {
    if (!TOKEN_RE.test(token)) return undefined;
    const r = await this.db
      .selectFrom('transfer_links')
      .selectAll()
      .where('token_hash', '=', hashToken(token))
      .where('kind', '=', kind)
      .executeTakeFirst();
    return r ? toRow(r) : undefined;
  }

  /** A link visible to this principal only; undefined for malformed ids and other principals' links. */
  async byIdFor(id: string, principalId: string, vaultId: number): Promise<LinkRow | undefined> {
    if (!ID_RE.test(id)) return undefined;
    const r = await this.db
      .selectFrom('transfer_links')
      .selectAll()
      .where('id', '=', id)
      .where('principal_id', '=', principalId)
      .where('vault_id', '=', vaultId)
      .executeTakeFirst();
    return r ? toRow(r) : undefined;
  }

  /** The claim: one conditional UPDATE, before any body byte is read. Undefined when not claimable. */
  async claim(token: string, now: Date): Promise<LinkRow | undefined> {
    if (!TOKEN_RE.test(token)) return undefined;
    const r = await this.db
      .updateTable('transfer_links')
      .set({ state: 'claimed', claimed_at: now })
      .where('token_hash', '=', hashToken(token))
      .where('kind', '=', 'upload')
      .where('state', '=', 'pending')
      .where('expires_at', '>', now)
      .returningAll()
      .executeTakeFirst();
    return r ? toRow(r) : undefined;
  }

  /** A pre-publish failure gives the link back (it can be used again until it expires). */
  async release(id: string): Promise<void> {
    await this.db
      .updateTable('transfer_links')
      .set({ state: 'pending', claimed_at: null })
      .where('id', '=', id)
      .where('state', '=', 'claimed')
      .execute();
  }

  async consume(id: string): Promise<void> {
    await this.db
      .updateTable('transfer_links')
      .set({ state: 'consumed' })
      .where('id', '=', id)
      .where('state', '=', 'claimed')
      .execute();
  }

  async revoke(id: string): Promise<void> {
    await this.db
      .updateTable('transfer_links')
      .set({ state: 'revoked' })
      .where('id', '=', id)
      .where('state', 'in', ['pending', 'claimed'])
      .execute();
  }

  async complete(id: string, now: Date, result: UploadResult): Promise<void> {
    await this.db
      .updateTable('transfer_links')
      .set({ state: 'completed', completed_at: now, result: JSON.stringify(result) })
      .where('id', '=', id)
      .where('state', '=', 'claimed')
      .execute();
  }

  /**
   * Whether the credential that minted a link may still use it: api keys must exist, be unrevoked,
   * unexpired and readwrite (for uploads). Other principal kinds (operator, oauth) are trusted here.
   */
  async credentialActive(row: LinkRow, now: Date): Promise<boolean> {
    if (row.principalKind !== 'api_key') return true;
    const r = await sql<{ scope: string; revoked_at: Date | null; expires_at: Date | null }>`
      SELECT scope, revoked_at, expires_at FROM api_keys WHERE id = ${row.principalId}`.execute(this.db);
    const k = r.rows[0];
    if (!k || k.revoked_at) return false;
    if (k.expires_at && new Date(k.expires_at).getTime() <= now.getTime()) return false;
    return row.kind === 'download' || k.scope === 'readwrite';
  }
}
