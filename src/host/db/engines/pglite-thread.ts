// The PGlite worker thread: owns the database (WASM heap, data directory) and executes wire-protocol
// bytes the main thread sends, so SQL never runs on the thread that serves requests. One request at a
// time, in arrival order: the main side never sends the next before this one answered.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { vector } from '@electric-sql/pglite-pgvector';
import { heapReducer, MemoryTrim, QUIET_LOG } from '../../memory-trim.js';
import { concat } from './bytes.js';
import { StatementProfile } from './pglite-profile.js';
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
// Once quiet, the thread collects the garbage of what it carried (memory-trim.ts).
const quiet = new MemoryTrim(QUIET_LOG, { reduceHeap: heapReducer() });
opened.then(
  () => {
    quiet.start();
    port.postMessage({ id: 0, ready: true, seeded } satisfies ThreadReply);
  },
  (e: unknown) => port.postMessage({ id: 0, error: String((e as Error)?.message ?? e) } satisfies ThreadReply),
);

// Off unless asked for (pglite-profile.ts): CPU per statement, for finding what makes this thread the bottleneck.
const profile = process.env.EXOCORTEX_PGLITE_PROFILE
  ? new StatementProfile(process.env.EXOCORTEX_PGLITE_PROFILE)
  : undefined;

let chain: Promise<unknown> = Promise.resolve();
port.on('message', (req: ThreadRequest) => {
  chain = chain.then(async () => {
    try {
      const pglite = await opened;
      if (req.close) {
        quiet.stop();
        profile?.stop();
        await pglite.close();
        port.postMessage({ id: req.id, closed: true } satisfies ThreadReply);
        port.close();
        return;
      }
      // The answer's bytes as PGlite writes them, copied out of its memory. Not execProtocolRaw: without a
      // receiver of its own, PGlite (0.5.14) also parses every message of the answer and appends it to a
      // result list that only execProtocol empties, so the thread kept every message it ever carried
      // (~90 MiB after a first index of 10k notes, growing with every query).
      const chunks: Uint8Array[] = [];
      const bytes = req.bytes ?? new Uint8Array(0);
      const execute = () =>
        pglite.execProtocolRawStream(bytes, {
          onRawData: (chunk) => chunks.push(chunk.slice()),
        });
      await (profile ? profile.measure(bytes, execute) : execute());
      const out = chunks.length === 1 ? chunks[0]! : concat(chunks);
      port.postMessage({ id: req.id, bytes: out } satisfies ThreadReply, [out.buffer as ArrayBuffer]);
    } catch (e) {
      port.postMessage({ id: req.id, error: String((e as Error)?.message ?? e) } satisfies ThreadReply);
    }
  });
});
