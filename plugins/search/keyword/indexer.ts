// The keyword index contributor: writes one search_keyword row per note (vectors under the configured text search
// configs over the text, joined by its CJK bigrams as a ready vector; stored body and head), keeps the vault's
// note count and total length in step by deltas, and queues the note for embedding. Never writes per-term
// rows: document frequencies are counted at query time from the GIN index, so a note costs one row here. Never embeds here: the index transaction must stay fast and independent of any provider.
import { sql } from 'kysely';
import {
  bigintArray,
  ModelMemo,
  type ContributorItem,
  type DatabaseTransaction,
  type IndexContributor,
} from '../../../src/sdk/index.js';
import type { NoteModel } from '../../../src/markdown/index.js';
import { DEFAULT_KEYWORD_OPTIONS, readKeywordOptions } from './meta.js';
import { keywordText, type KeywordText } from './note-text.js';

type TextLimits = { readonly headChars: number; readonly bodyChars: number };
type KeywordTexts = ModelMemo<NoteModel, TextLimits, KeywordText>;

/**
 * One statement for the rows and the embedding queue, however many notes the batch holds, after one read
 * of the stored options (another process may have rebuilt the index under a new configuration list). Without
 * an embedding provider (`embeds` false) nothing is queued: the queue would only grow, a row and two index
 * entries a note, and the embeddings service queues what it lacks when it starts with a provider
 * (`queueUnembedded`).
 */
async function writeKeywordRows(
  trx: DatabaseTransaction,
  items: ReadonlyArray<ContributorItem<NoteModel>>,
  texts: KeywordTexts,
  embeds: boolean,
): Promise<void> {
  if (items.length === 0) return;
  const options = (await readKeywordOptions(trx)) ?? DEFAULT_KEYWORD_OPTIONS;
  const rows = items.map(({ note, model }) => {
    const text = texts.get(model, options);
    return {
      note_id: note.id,
      vault_id: note.vaultId,
      title_text: text.titleText,
      // The parsed forms differ from the stored text only where it holds CJK runs or compound tokens: else not sent twice.
      title_index: text.titleIndex === text.titleText ? null : text.titleIndex,
      title_cjk: text.titleCjk || null,
      title_keys: text.titleKeys,
      head: text.head,
      body: text.body,
      body_index: text.bodyIndex === text.body ? null : text.bodyIndex,
      body_cjk: text.bodyCjk || null,
      body_len: text.length,
      hash: note.contentHash,
    };
  });
  const cfgs = `{${options.configs.join(',')}}`;
  // The vault's stats row is upserted first: it moves the totals by the difference only (the old lengths are
  // read in the same snapshot the upsert replaces them in; the old vectors are not read: detoasting them was half
  // of an edit's cost) and bumps the vault's change stamp, which the written rows carry so the in-memory index can
  // catch up on them. The old rows are looked up by key (`= ANY`): joined to the batch's rows, whose count the
  // planner cannot see, the plan scanned the whole table once it held a few thousand notes, so each batch of a
  // first index cost more than the one before.
  const rowsWithStats = sql`
    r AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        AS r(note_id bigint, vault_id int, title_text text, title_index text, title_cjk tsvector, title_keys jsonb, head text, body text,
              body_index text, body_cjk tsvector, body_len int, hash text)
    ), old AS (
      SELECT k.note_id, k.vault_id, k.body_len FROM search_keyword k WHERE k.note_id = ANY(ARRAY(SELECT note_id FROM r))
    ), stats AS (
      INSERT INTO search_keyword_stats (vault_id, docs, total_len, rev)
      SELECT vault_id, sum(n), sum(len), 1 FROM (
        SELECT vault_id, 1 AS n, body_len AS len FROM r UNION ALL SELECT vault_id, -1, -body_len FROM old
      ) s GROUP BY vault_id
      ON CONFLICT (vault_id) DO UPDATE SET docs = search_keyword_stats.docs + EXCLUDED.docs, total_len = search_keyword_stats.total_len + EXCLUDED.total_len,
        rev = search_keyword_stats.rev + 1
      RETURNING vault_id, rev
    )`;
  const keywordRows = sql`
      INSERT INTO search_keyword (note_id, vault_id, title_text, title_keys, title_tsv, tsv, head, body, body_len, rev)
      SELECT r.note_id, r.vault_id, r.title_text, ARRAY(SELECT jsonb_array_elements_text(r.title_keys)),
             search_title_tsv(${cfgs}::regconfig[], coalesce(r.title_index, r.title_text), coalesce(r.title_cjk, ''::tsvector)),
             search_note_tsv(${cfgs}::regconfig[], coalesce(r.title_index, r.title_text), coalesce(r.body_index, r.body),
                             coalesce(r.title_cjk, ''::tsvector), coalesce(r.body_cjk, ''::tsvector)), r.head, r.body, r.body_len,
             (SELECT st.rev FROM stats st WHERE st.vault_id = r.vault_id)
      FROM r
      ON CONFLICT (note_id) DO UPDATE SET vault_id = EXCLUDED.vault_id, title_text = EXCLUDED.title_text,
        title_keys = EXCLUDED.title_keys, title_tsv = EXCLUDED.title_tsv, tsv = EXCLUDED.tsv, head = EXCLUDED.head, body = EXCLUDED.body,
        body_len = EXCLUDED.body_len, rev = EXCLUDED.rev`;
  if (!embeds) {
    await sql`WITH ${rowsWithStats} ${keywordRows}`.execute(trx);
    return;
  }
  await sql`
    WITH ${rowsWithStats}, kw AS (${keywordRows})
    INSERT INTO search_embed_queue (note_id, vault_id, content_hash)
    SELECT r.note_id, r.vault_id, r.hash FROM r
    WHERE NOT EXISTS (SELECT 1 FROM search_embedded_notes e WHERE e.note_id = r.note_id AND e.content_hash = r.hash)
    ON CONFLICT (note_id) DO UPDATE SET content_hash = EXCLUDED.content_hash, enqueued_at = now(), attempts = 0,
      next_attempt_at = now(), last_error = NULL
    WHERE search_embed_queue.content_hash <> EXCLUDED.content_hash
  `.execute(trx);
}

/**
 * The keyword contributor under the configured text limits (the ones the boot check stores). A note's keyword text
 * is derived once per parsed model: an index pass derives it in `prepare`, while the batch before is written, so
 * the index transaction does not (splitting a CJK note into bigrams is the costly part).
 */
export function keywordIndexer(limits: TextLimits, options: { readonly embeds: boolean }): IndexContributor<NoteModel> {
  const { embeds } = options;
  const texts: KeywordTexts = new ModelMemo(keywordText, (l) => `${l.headChars}:${l.bodyChars}`);
  const own: TextLimits = { headChars: limits.headChars, bodyChars: limits.bodyChars };
  return {
    name: 'search',
    // 2: CJK runs indexed as bigrams, body length and the vault's length totals for BM25 ranking.
    // 3: compound tokens (`task.due`, `file.md`, URLs) indexed as their words.
    // 4: indented code is body text (the parser's chunks keep it).
    // Not bumped for migration 0009 (CJK bigrams as a ready vector under weights B and C): a row written before it keeps
    // its bigrams at A and D, which every reader still reads right (A is title, D body; a CJK term is looked up in the
    // vector, not the body index), so upgrading re-derives nothing; `search rebuild-keyword` rewrites every row now.
    version: 4,
    // Tokenising the whole note and its GIN entries is most of a write-through's commit: written in the
    // index's second transaction, after the tool has answered (readers await IndexService.settled).
    deferred: true,
    prepare: (model) => texts.warm(model, own),
    write: (trx, note, model) => writeKeywordRows(trx, [{ note, model }], texts, embeds),
    writeMany: (trx, items) => writeKeywordRows(trx, items, texts, embeds),
    // Vectors and the queue row hang off notes(id) ON DELETE CASCADE: a move that keeps the note id
    // keeps its vectors, and write() re-queues only when the content hash differs from the embedded one.
    async remove(trx, note) {
      await sql`
      WITH gone AS (DELETE FROM search_keyword WHERE note_id = ${note.id} RETURNING vault_id, body_len)
      UPDATE search_keyword_stats s SET docs = s.docs - 1, total_len = s.total_len - gone.body_len, rev = s.rev + 1 FROM gone WHERE s.vault_id = gone.vault_id`.execute(
        trx,
      );
    },
    async removeMany(trx, notes) {
      // The stats move as they would one note at a time (the change stamp by one a note).
      await sql`
      WITH gone AS (DELETE FROM search_keyword WHERE note_id = ANY(${bigintArray(notes.map((n) => n.id))}) RETURNING vault_id, body_len),
      sums AS (SELECT vault_id, count(*) AS n, sum(body_len) AS len FROM gone GROUP BY vault_id)
      UPDATE search_keyword_stats s SET docs = s.docs - sums.n, total_len = s.total_len - sums.len, rev = s.rev + sums.n
      FROM sums WHERE s.vault_id = sums.vault_id`.execute(trx);
    },
  };
}
