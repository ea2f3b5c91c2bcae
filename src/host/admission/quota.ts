// Daily quotas in the database: one row per credential or user and UTC day, counted by one upsert that
// refuses past the limit in the same statement (atomic under concurrency, across every process sharing
// the database), with the day taken from the database's clock. A restart forgets nothing.
import { sql, type Kysely } from 'kysely';
import { Refusal } from '../../sdk/refusals.js';
import type { QuotaStore } from './index.js';

export class DatabaseQuota implements QuotaStore {
  private calls = 0;

  constructor(private readonly db: Kysely<any>) {}

  async consume(key: string, limit: number): Promise<void> {
    const r = await sql<{ n: number }>`
      INSERT INTO admission_quota AS q (key, day, n) VALUES (${key}, (now() AT TIME ZONE 'UTC')::date, 1)
      ON CONFLICT (key, day) DO UPDATE SET n = q.n + 1 WHERE q.n < ${limit}
      RETURNING n`.execute(this.db);
    // Yesterday's rows are of no use: drop them now and then (one call in a thousand).
    if (++this.calls % 1000 === 0)
      void sql`DELETE FROM admission_quota WHERE day < (now() AT TIME ZONE 'UTC')::date - 1`
        .execute(this.db)
        .catch(() => undefined);
    if (r.rows.length > 0) return;
    const tomorrow = new Date();
    tomorrow.setUTCHours(24, 0, 0, 0);
    throw new Refusal('quota_exceeded', { limit, resetsAt: tomorrow.toISOString() });
  }
}
