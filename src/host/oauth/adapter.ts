// oidc-provider's persistence adapter over the host database (Kysely; PGlite and PostgreSQL alike):
// one row per record in oauth_records, keyed by (model, id), with the lookups the provider needs
// (uid, user code, grant) and a sweep of expired rows. Never interprets payloads beyond those keys.
import { sql, type Kysely } from 'kysely';

type Payload = Record<string, unknown> & { grantId?: string; uid?: string; userCode?: string; consumed?: unknown };

export class KyselyOAuthAdapter {
  constructor(
    private readonly db: Kysely<any>,
    private readonly model: string,
  ) {}

  async upsert(id: string, payload: Payload, expiresIn?: number): Promise<void> {
    const expiresAt = expiresIn ? new Date(Date.now() + expiresIn * 1000) : null;
    const row = {
      model: this.model,
      id,
      payload: JSON.stringify(payload),
      grant_id: payload.grantId ?? null,
      uid: payload.uid ?? null,
      user_code: payload.userCode ?? null,
      expires_at: expiresAt,
    };
    await this.db
      .insertInto('oauth_records')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['model', 'id']).doUpdateSet({
          payload: row.payload,
          grant_id: row.grant_id,
          uid: row.uid,
          user_code: row.user_code,
          expires_at: row.expires_at,
        }),
      )
      .execute();
  }

  private async findWhere(column: 'id' | 'uid' | 'user_code', value: string): Promise<Payload | undefined> {
    const row = await this.db
      .selectFrom('oauth_records')
      .select(['payload', 'consumed_at'])
      .where('model', '=', this.model)
      .where(column, '=', value)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', new Date())]))
      .executeTakeFirst();
    if (!row) return undefined;
    const payload = (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as Payload;
    return row.consumed_at ? { ...payload, consumed: Math.floor(new Date(row.consumed_at).getTime() / 1000) } : payload;
  }

  find(id: string): Promise<Payload | undefined> {
    return this.findWhere('id', id);
  }

  findByUid(uid: string): Promise<Payload | undefined> {
    return this.findWhere('uid', uid);
  }

  findByUserCode(userCode: string): Promise<Payload | undefined> {
    return this.findWhere('user_code', userCode);
  }

  async consume(id: string): Promise<void> {
    await this.db
      .updateTable('oauth_records')
      .set({ consumed_at: new Date() })
      .where('model', '=', this.model)
      .where('id', '=', id)
      .execute();
  }

  async destroy(id: string): Promise<void> {
    await this.db.deleteFrom('oauth_records').where('model', '=', this.model).where('id', '=', id).execute();
  }

  /** Every record of the grant goes, whatever its model (the provider calls this once per model). */
  async revokeByGrantId(grantId: string): Promise<void> {
    await revokeGrant(this.db, grantId);
  }
}

/** Delete a grant and every code, token and record minted under it: its access tokens stop working at once. */
export async function revokeGrant(db: Kysely<any>, grantId: string): Promise<number> {
  const res = await db
    .deleteFrom('oauth_records')
    .where((eb) => eb.or([eb('grant_id', '=', grantId), eb.and([eb('model', '=', 'Grant'), eb('id', '=', grantId)])]))
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Remove rows past their expiry (run at start and then periodically). */
export async function sweepExpired(db: Kysely<any>): Promise<number> {
  const res = await db.deleteFrom('oauth_records').where('expires_at', '<', sql<Date>`now()`).executeTakeFirst();
  return Number(res.numDeletedRows);
}
