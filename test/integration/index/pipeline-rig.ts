// The index pipeline tests' rig: a temp copy of a corpus vault indexed by an IndexPipeline of its own,
// over one database and worker pool per test file, with a contributor that records every call. Test-only;
// never touches the corpus originals.
import t from 'tap';
import { corpus as corpusPath } from '../../fixtures/corpus.js';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openDatabase, type DatabaseService } from '../../../src/host/db/index.js';
import { IndexPipeline, type ContributorEntry, type IndexSettings } from '../../../src/host/index/index.js';
import { pgliteTemplate } from '../../../src/host/testing/harness.js';
import { openVault } from '../../../src/host/vault/index.js';
import { PiscinaPool } from '../../../src/host/workers/pool.js';
import type { NoteModel } from '../../../src/markdown/index.js';
import type { IndexContributor, Logger, WorkerPool } from '../../../src/sdk/types.js';
import type { VaultFs } from '../../../src/sdk/vault.js';

const CORPUS = corpusPath('obsidian-tasks-demo');
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const SETTINGS: IndexSettings = {
  watch: true,
  debounceMs: 30,
  reconcileSeconds: 0,
  maxNoteBytes: 5 * 1024 * 1024,
  batchSize: 50,
  parseTaskSize: 25,
  prefetchBatches: 2,
  readConcurrency: 16,
  inlineParseMaxBytes: 64 * 1024,
  groupCommitWaitMs: 10,
  deferredWrites: true,
  deferredDelayMs: 200,
};

export interface Call {
  kind: 'write' | 'remove' | 'rename';
  path: string;
  from?: string;
  reason?: string;
  origin?: string;
  id: number;
  version: number;
}

export function recorder(version: number, calls: Call[]): IndexContributor<NoteModel> {
  return {
    name: 'recorder',
    version,
    async write(trx, note, model) {
      await sql`select 1`.execute(trx);
      if (model.path !== note.path) throw new Error('model path differs from note path');
      calls.push({ kind: 'write', path: note.path, id: note.id, version });
    },
    async remove(_trx, note) {
      calls.push({
        kind: 'remove',
        path: note.path,
        id: note.id,
        version,
        reason: note.reason,
        origin: note.origin?.name,
      });
    },
    async rename(_trx, note, from) {
      calls.push({ kind: 'rename', path: note.path, from, id: note.id, version });
    },
  };
}

export type NoteRow = { id: string; content_hash: string; title: string; content_changed_at: Date; tags: string[] };

export interface Rig {
  dir: string;
  vault: string;
  fs: VaultFs;
  database: DatabaseService;
  workers: PiscinaPool;
  pipeline: IndexPipeline;
  calls: Call[];
  contributors: ContributorEntry[];
  row(p: string): Promise<NoteRow | undefined>;
  close(): Promise<void>;
}

// One database and one worker pool for the file, as one host has for all its vaults: each rig is a vault
// of its own (its own row, notes, marks and contributor state), so a rig costs a vault copy and a cold
// index, not a PGlite start and two worker threads.
const shared = (async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-index-db-'));
  cpSync(await pgliteTemplate(), path.join(dir, 'db'), { recursive: true });
  const database = await openDatabase(`pglite:${path.join(dir, 'db')}`, { baseDir: '/' });
  const workers = new PiscinaPool({ threads: 2, idleTimeoutMs: 60_000 });
  t.teardown(async () => {
    await workers.close();
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { database, workers };
})();
let rigs = 0;

export async function rig(
  settings: Partial<IndexSettings> = {},
  files: Record<string, string | Uint8Array> = {},
  /** The pool the pipeline is given, made from the file's shared one (a test's spy around it, say). */
  poolFor: (shared: PiscinaPool) => WorkerPool = (shared) => shared,
): Promise<Rig> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-index-'));
  const vault = path.join(dir, 'vault');
  cpSync(CORPUS, vault, { recursive: true });
  for (const [p, c] of Object.entries(files)) writeFileSync(path.join(vault, p), c);
  const { database, workers } = await shared;
  const vaultId = Number(
    (
      await sql<{
        id: number;
      }>`INSERT INTO vaults (name, root) VALUES (${`t${++rigs}`}, ${vault}) RETURNING id`.execute(database.db)
    ).rows[0].id,
  );
  const fs = await openVault(vault, { allowNamedStaging: true });
  const calls: Call[] = [];
  const contributors: ContributorEntry[] = [{ family: 'fixture', contributor: recorder(1, calls) }];
  const pipeline = new IndexPipeline({
    db: database.db,
    vault: { id: vaultId, name: 't', obsidianName: null, fs },
    workers: poolFor(workers),
    log: silent,
    settings: { ...SETTINGS, ...settings },
    contributors: () => contributors.map((e) => ({ ...e })),
  });
  return {
    dir,
    vault,
    fs,
    database,
    workers,
    pipeline,
    calls,
    contributors,
    async row(p) {
      return (await database.db
        .selectFrom('notes')
        .selectAll()
        .where('vault_id', '=', vaultId)
        .where('path', '=', p)
        .executeTakeFirst()) as NoteRow | undefined;
    },
    async close() {
      await pipeline.close();
      await fs.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 4000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** How many notes of the rig's vault carry a deferred mark (rows a deferred contributor has still to write). */
export async function deferredMarks(r: Rig): Promise<number> {
  const { rows } = await sql<{
    n: number;
  }>`SELECT count(*)::int AS n FROM index_deferred WHERE vault_id = ${r.pipeline.vaultId}`.execute(r.database.db);
  return Number(rows[0].n);
}
