// The keyword index's stored options and fingerprint (search_meta 'keyword'): checked at boot,
// rewritten only by a rebuild or an empty index; the rebuild itself. Never rebuilds silently on its own.
import { sql } from 'kysely';
import type { Database } from '../../../src/sdk/index.js';
import { indexParts } from './index-text.js';

export interface KeywordOptions {
  readonly configs: string[];
  readonly headChars: number;
  readonly bodyChars: number;
}

export const DEFAULT_KEYWORD_OPTIONS: KeywordOptions = { configs: ['english'], headChars: 160, bodyChars: 200_000 };

export async function readKeywordOptions(db: Database): Promise<KeywordOptions | undefined> {
  const r = await sql<{ value: KeywordOptions }>`SELECT value FROM search_meta WHERE key = 'keyword'`.execute(db);
  return r.rows[0]?.value;
}

export async function writeKeywordOptions(db: Database, options: KeywordOptions): Promise<void> {
  await sql`INSERT INTO search_meta (key, value) VALUES ('keyword', ${JSON.stringify(options)}::jsonb)
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`.execute(db);
}

/** Text search configurations this database has, for the "bad name" message. */
export async function availableConfigs(db: Database): Promise<string[]> {
  const r = await sql<{ cfgname: string }>`SELECT cfgname FROM pg_ts_config ORDER BY cfgname`.execute(db);
  return r.rows.map((x) => x.cfgname);
}

/**
 * Boot check: every configured name exists, and the stored vectors were built with the same list.
 * Throws an Error whose message the host shows as the family's failure reason.
 */
export async function checkKeywordConfigs(db: Database, wanted: KeywordOptions): Promise<void> {
  const available = await availableConfigs(db);
  const bad = wanted.configs.filter((c) => !available.includes(c));
  if (bad.length) {
    throw new Error(
      `search.ftsConfigs names text search configuration(s) this database lacks: ${bad.join(', ')}; available: ${available.join(', ')}`,
    );
  }
  const stored = await readKeywordOptions(db);
  if (stored && sameList(stored.configs, wanted.configs)) {
    if (stored.headChars !== wanted.headChars || stored.bodyChars !== wanted.bodyChars)
      await writeKeywordOptions(db, wanted);
    return;
  }
  const rows = await sql<{
    n: number;
  }>`SELECT count(*)::int AS n FROM (SELECT 1 FROM search_keyword LIMIT 1) s`.execute(db);
  if (!stored || (rows.rows[0]?.n ?? 0) === 0) {
    await writeKeywordOptions(db, wanted);
    return;
  }
  throw new Error(
    `search.ftsConfigs changed from [${stored.configs.join(', ')}] to [${wanted.configs.join(', ')}]; the stored keyword vectors were built with the old list. ` +
      'Run `exocortex search rebuild-keyword` (it re-derives every vector under the new list), then start again',
  );
}

/** Rows re-derived per statement by a rebuild (one round trip each; bodies are read back in these batches). */
const REBUILD_BATCH = 500;

/**
 * Re-derive every stored keyword vector under `configs` and record them as the fingerprint. The
 * body text is stored with the vector, so no note is re-read; CJK segmentation runs here, then the
 * length totals are recounted from the new rows. Returns the number of rows rebuilt.
 */
export async function rebuildKeyword(
  db: Database,
  options: { configs: string[]; headChars?: number; bodyChars?: number; vaultId?: number },
): Promise<number> {
  const available = await availableConfigs(db);
  const bad = options.configs.filter((c) => !available.includes(c));
  if (bad.length)
    throw new Error(`unknown text search configuration(s): ${bad.join(', ')}; available: ${available.join(', ')}`);
  const cfgs = `{${options.configs.join(',')}}`;
  const vault = options.vaultId === undefined ? sql`` : sql`AND vault_id = ${options.vaultId}`;
  return db.transaction().execute(async (trx) => {
    let after = 0;
    let n = 0;
    for (;;) {
      const batch = await sql<{ note_id: string; title_text: string; body: string }>`
        SELECT note_id, title_text, body FROM search_keyword WHERE note_id > ${after} ${vault} ORDER BY note_id LIMIT ${REBUILD_BATCH}`.execute(
        trx,
      );
      if (!batch.rows.length) break;
      const rows = batch.rows.map((r) => {
        const title = indexParts(r.title_text);
        const body = indexParts(r.body);
        return {
          note_id: r.note_id,
          title_index: title.text,
          title_cjk: title.cjk,
          body_index: body.text,
          body_cjk: body.cjk,
          body_len: title.words + body.words,
        };
      });
      await sql`
        UPDATE search_keyword k SET title_tsv = search_title_tsv(${cfgs}::regconfig[], r.title_index, r.title_cjk),
          tsv = search_note_tsv(${cfgs}::regconfig[], r.title_index, r.body_index, r.title_cjk, r.body_cjk), body_len = r.body_len,
          rev = coalesce((SELECT s.rev + 1 FROM search_keyword_stats s WHERE s.vault_id = k.vault_id), 1)
        FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
          AS r(note_id bigint, title_index text, title_cjk tsvector, body_index text, body_cjk tsvector, body_len int)
        WHERE k.note_id = r.note_id`.execute(trx);
      after = Number(batch.rows[batch.rows.length - 1].note_id);
      n += batch.rows.length;
    }
    await recountTermStats(trx, options.vaultId);
    await writeKeywordOptions(trx, {
      configs: options.configs,
      headChars: options.headChars ?? DEFAULT_KEYWORD_OPTIONS.headChars,
      bodyChars: options.bodyChars ?? DEFAULT_KEYWORD_OPTIONS.bodyChars,
    });
    return n;
  });
}

/**
 * Recount the note counts and length totals from the stored rows (all vaults, or one). The change stamp moves on,
 * never back, so every in-memory index sees the rows a rebuild stamped and reloads.
 */
export async function recountTermStats(db: Database, vaultId?: number): Promise<void> {
  const only = vaultId === undefined ? sql`` : sql`WHERE vault_id = ${vaultId}`;
  const onlyStats = vaultId === undefined ? sql`` : sql`AND s.vault_id = ${vaultId}`;
  await sql`INSERT INTO search_keyword_stats (vault_id, docs, total_len, rev)
    SELECT vault_id, count(*), coalesce(sum(body_len), 0), coalesce(max(rev), 0) + 1 FROM search_keyword ${only} GROUP BY vault_id
    ON CONFLICT (vault_id) DO UPDATE SET docs = EXCLUDED.docs, total_len = EXCLUDED.total_len,
      rev = greatest(search_keyword_stats.rev + 1, EXCLUDED.rev)`.execute(db);
  await sql`UPDATE search_keyword_stats s SET docs = 0, total_len = 0, rev = s.rev + 1
    WHERE NOT EXISTS (SELECT 1 FROM search_keyword k WHERE k.vault_id = s.vault_id) ${onlyStats}`.execute(db);
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
