// One bit per dimension of every chunk vector (pgvector's binary_quantize) in a narrow side table, kept by a
// trigger on search_chunks: the quantized strategy scans these ~128-byte rows instead of 4 KB vectors.
// Only where search_chunks exists; the trigger and backfill only where binary_quantize does (pgvector ≥ 0.7).
import { sql, type Kysely } from 'kysely';

async function hasChunks(db: Kysely<any>): Promise<boolean> {
  const r = await sql<{ t: string | null }>`SELECT to_regclass('search_chunks')::text AS t`.execute(db);
  return !!r.rows[0]?.t;
}

export default {
  async up(db: Kysely<any>): Promise<void> {
    if (!(await hasChunks(db))) return;
    // `bit varying`: the length follows the configured dimensions (guarded by the embedding fingerprint);
    // `<~>` takes it through the binary-coercible cast to `bit`.
    await sql`
      CREATE TABLE search_chunk_bits (
        note_id  bigint NOT NULL,
        ordinal  integer NOT NULL,
        vault_id integer NOT NULL,
        bits     bit varying NOT NULL,
        PRIMARY KEY (note_id, ordinal),
        FOREIGN KEY (note_id, ordinal) REFERENCES search_chunks (note_id, ordinal) ON DELETE CASCADE ON UPDATE CASCADE
      );
      CREATE INDEX search_chunk_bits_vault ON search_chunk_bits (vault_id);
      CREATE FUNCTION search_chunk_bits_sync() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        INSERT INTO search_chunk_bits (note_id, ordinal, vault_id, bits)
        VALUES (NEW.note_id, NEW.ordinal, NEW.vault_id, binary_quantize(NEW.embedding))
        ON CONFLICT (note_id, ordinal) DO UPDATE SET vault_id = EXCLUDED.vault_id, bits = EXCLUDED.bits;
        RETURN NULL;
      END $fn$;
    `.execute(db);
    // Without binary_quantize the trigger would fail every chunk write; the strategy is refused there instead.
    const quantize = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM pg_proc WHERE proname = 'binary_quantize'`.execute(db);
    if (!quantize.rows[0]?.n) return;
    await sql`
      CREATE TRIGGER search_chunk_bits_sync AFTER INSERT OR UPDATE OF embedding, vault_id ON search_chunks
        FOR EACH ROW EXECUTE FUNCTION search_chunk_bits_sync();
      INSERT INTO search_chunk_bits (note_id, ordinal, vault_id, bits)
        SELECT note_id, ordinal, vault_id, binary_quantize(embedding) FROM search_chunks;
    `.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    if (!(await hasChunks(db))) return;
    await sql`
      DROP TRIGGER IF EXISTS search_chunk_bits_sync ON search_chunks;
      DROP TABLE IF EXISTS search_chunk_bits;
      DROP FUNCTION IF EXISTS search_chunk_bits_sync();
    `.execute(db);
  },
};
