// The search family's tables: the keyword vectors, its fingerprints, the embedding queue and the
// chunk vectors. Only SQL PostgreSQL 15 understands; the vector table exists only where pgvector does.
import { sql, type Kysely } from 'kysely';

export default {
  async up(db: Kysely<any>): Promise<void> {
    await sql`
      CREATE TABLE search_keyword (
        note_id    bigint PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
        vault_id   integer NOT NULL,
        title_text text NOT NULL,
        title_keys text[] NOT NULL,
        title_tsv  tsvector NOT NULL,
        tsv        tsvector NOT NULL,
        head       text NOT NULL,
        body       text NOT NULL
      );
      CREATE INDEX search_keyword_tsv ON search_keyword USING gin (tsv);
      CREATE INDEX search_keyword_title_tsv ON search_keyword USING gin (title_tsv);
      CREATE INDEX search_keyword_title_keys ON search_keyword USING gin (title_keys);
      CREATE INDEX search_keyword_vault ON search_keyword (vault_id);
      CREATE TABLE search_meta (
        key        text PRIMARY KEY,
        value      jsonb NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE search_embed_queue (
        note_id         bigint PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
        vault_id        integer NOT NULL,
        content_hash    text NOT NULL,
        enqueued_at     timestamptz NOT NULL DEFAULT now(),
        attempts        integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        last_error      text
      );
      CREATE INDEX search_embed_queue_due ON search_embed_queue (next_attempt_at, enqueued_at);
      CREATE TABLE search_embedded_notes (
        note_id      bigint PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
        vault_id     integer NOT NULL,
        content_hash text NOT NULL,
        chunk_count  integer NOT NULL,
        truncated    boolean NOT NULL DEFAULT false,
        embedded_at  timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX search_embedded_notes_vault ON search_embedded_notes (vault_id);
      CREATE FUNCTION search_title_tsv(configs regconfig[], title text) RETURNS tsvector
      LANGUAGE plpgsql IMMUTABLE AS $fn$
      DECLARE r tsvector := ''::tsvector; c regconfig;
      BEGIN
        FOREACH c IN ARRAY configs LOOP r := r || setweight(to_tsvector(c, coalesce(title, '')), 'A'); END LOOP;
        RETURN r;
      END $fn$;
      CREATE FUNCTION search_note_tsv(configs regconfig[], title text, body text) RETURNS tsvector
      LANGUAGE plpgsql IMMUTABLE AS $fn$
      DECLARE r tsvector := ''::tsvector; c regconfig;
      BEGIN
        FOREACH c IN ARRAY configs LOOP
          r := r || setweight(to_tsvector(c, coalesce(title, '')), 'A') || setweight(to_tsvector(c, coalesce(body, '')), 'D');
        END LOOP;
        RETURN r;
      END $fn$;
    `.execute(db);
    const available = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM pg_available_extensions WHERE name = 'vector'`.execute(db);
    if ((available.rows[0]?.n ?? 0) > 0) {
      await sql`CREATE EXTENSION IF NOT EXISTS vector`.execute(db);
      // Untyped \`vector\` column: the dimension comes from the configured model (guarded by the
      // embedding fingerprint). Exact scans need no typed column; an HNSW index would be an expression index.
      await sql`
        CREATE TABLE search_chunks (
          note_id         bigint NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
          vault_id        integer NOT NULL,
          ordinal         integer NOT NULL,
          section_ordinal integer NOT NULL,
          heading_path    text NOT NULL,
          preview         text NOT NULL,
          content_hash    text NOT NULL,
          embedding       vector NOT NULL,
          PRIMARY KEY (note_id, ordinal)
        );
        CREATE INDEX search_chunks_vault ON search_chunks (vault_id);
      `.execute(db);
    }
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`DROP TABLE IF EXISTS search_chunks; DROP TABLE search_embedded_notes; DROP TABLE search_embed_queue; DROP TABLE search_meta; DROP TABLE search_keyword; DROP FUNCTION search_title_tsv; DROP FUNCTION search_note_tsv;`.execute(
      db,
    );
  },
};
