// The keyword index contributor: writes one search_keyword row per note (vectors under the
// configured text search configs, stored body and head) and queues the note for embedding.
// Never embeds here: the index transaction must stay fast and independent of any provider.
import { sql } from 'kysely';
import type { DatabaseTransaction, IndexContributor, IndexedNote } from '../../../src/sdk/index.js';
import type { NoteModel } from '../../../src/markdown/index.js';
import { DEFAULT_KEYWORD_OPTIONS, readKeywordOptions } from './meta.js';
import { keywordText } from './note-text.js';

export async function writeKeywordRow(trx: DatabaseTransaction, note: IndexedNote, model: NoteModel): Promise<void> {
  const options = (await readKeywordOptions(trx)) ?? DEFAULT_KEYWORD_OPTIONS;
  const text = keywordText(model, options);
  const cfgs = `{${options.configs.join(',')}}`;
  await sql`
    INSERT INTO search_keyword (note_id, vault_id, title_text, title_keys, title_tsv, tsv, head, body)
    VALUES (${note.id}, ${note.vaultId}, ${text.titleText}, ${text.titleKeys}::text[],
            search_title_tsv(${cfgs}::regconfig[], ${text.titleText}),
            search_note_tsv(${cfgs}::regconfig[], ${text.titleText}, ${text.body}), ${text.head}, ${text.body})
    ON CONFLICT (note_id) DO UPDATE SET vault_id = EXCLUDED.vault_id, title_text = EXCLUDED.title_text,
      title_keys = EXCLUDED.title_keys, title_tsv = EXCLUDED.title_tsv, tsv = EXCLUDED.tsv, head = EXCLUDED.head, body = EXCLUDED.body
  `.execute(trx);
  await sql`
    INSERT INTO search_embed_queue (note_id, vault_id, content_hash)
    SELECT ${note.id}, ${note.vaultId}, ${note.contentHash}
    WHERE NOT EXISTS (SELECT 1 FROM search_embedded_notes e WHERE e.note_id = ${note.id} AND e.content_hash = ${note.contentHash})
    ON CONFLICT (note_id) DO UPDATE SET content_hash = EXCLUDED.content_hash, enqueued_at = now(), attempts = 0,
      next_attempt_at = now(), last_error = NULL
    WHERE search_embed_queue.content_hash <> EXCLUDED.content_hash
  `.execute(trx);
}

export const keywordIndexer: IndexContributor<NoteModel> = {
  name: 'search',
  version: 1,
  write: writeKeywordRow,
  // Vectors and the queue row hang off notes(id) ON DELETE CASCADE: a move that keeps the note id
  // keeps its vectors, and write() re-queues only when the content hash differs from the embedded one.
  async remove(trx, note) {
    await sql`DELETE FROM search_keyword WHERE note_id = ${note.id}`.execute(trx);
  },
};
