// The PGlite worker thread: owns the database (WASM heap, data directory) and executes wire-protocol
// bytes the main thread sends, so SQL never runs on the thread that serves requests. One request at a
// time, in arrival order: the main side never sends the next before this one answered.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { vector } from '@electric-sql/pglite-pgvector';
import type { ThreadReply, ThreadRequest } from './pglite-threaded.js';
import { type Seeded, type SeedSources, seedDataDir } from './pglite-template.js';

const port = parentPort;
if (!port) throw new Error('pglite-thread runs only as a worker thread');

const { dataDir, startParams, seed } = workerData as { dataDir: string; startParams?: string[]; seed?: SeedSources };

let seeded: Seeded = {};

async function open(): Promise<PGlite> {
  // A new directory is filled here, off the thread that answers clients (a first start's initialize).
  if (seed) seeded = await seedDataDir(dataDir, seed);
  const pglite = await PGlite.create({ dataDir, extensions: { vector, pg_trgm }, startParams });
  await pglite.exec('CREATE EXTENSION IF NOT EXISTS vector; CREATE EXTENSION IF NOT EXISTS pg_trgm;');
  return pglite;
}

const opened = open();
opened.then(
  () => port.postMessage({ id: 0, ready: true, seeded } satisfies ThreadReply),
  (e: unknown) => port.postMessage({ id: 0, error: String((e as Error)?.message ?? e) } satisfies ThreadReply),
);

let chain: Promise<unknown> = Promise.resolve();
port.on('message', (req: ThreadRequest) => {
  chain = chain.then(async () => {
    try {
      const pglite = await opened;
      if (req.close) {
        await pglite.close();
        port.postMessage({ id: req.id, closed: true } satisfies ThreadReply);
        port.close();
        return;
      }
      const raw = await pglite.execProtocolRaw(req.bytes ?? new Uint8Array(0));
      // Transfer only a buffer the answer owns whole; a view into PGlite's own memory is copied first.
      const out = raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength ? raw : raw.slice();
      port.postMessage({ id: req.id, bytes: out } satisfies ThreadReply, [out.buffer as ArrayBuffer]);
    } catch (e) {
      port.postMessage({ id: req.id, error: String((e as Error)?.message ?? e) } satisfies ThreadReply);
    }
  });
});
