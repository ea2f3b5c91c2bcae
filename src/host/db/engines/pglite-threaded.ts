// PGlite on its own worker thread, seen from the main thread as an object with PGlite's protocol
// entry point, so node-postgres' connection (pglite-connection.ts) and every Kysely query above it are
// unchanged. SQL then runs beside the event loop instead of on it: a commit no longer stalls sockets, file
// callbacks and parses.
//
// The bridge hands over one protocol message per call (Parse, Bind, Describe, Execute, Sync…). Messages
// that answer nothing on their own are held and sent with the next Sync, Flush, Query or copy end, so an
// extended-protocol query costs one round trip to the thread, not five. A transaction's `begin` is
// answered here and travels with the transaction's first statement. Answers come back as raw bytes and
// are parsed here by pg-protocol, the parser node-postgres uses against a server.
import { type ResourceLimits, Worker } from 'node:worker_threads';
import { importTypeScriptCode } from '../../workers/typescript.js';
import { concat, isBegin } from './bytes.js';
import type { ProtocolTarget } from './pglite-connection.js';
import type { Seeded, SeedSources } from './pglite-template.js';
import type { BackendMessage } from 'pg-protocol/dist/messages';
import { Parser } from 'pg-protocol/dist/parser';

export interface ThreadRequest {
  readonly id: number;
  readonly bytes?: Uint8Array;
  readonly close?: boolean;
}

export interface ThreadReply {
  readonly id: number;
  readonly ready?: boolean;
  /** With `ready`: how the thread filled a new data directory. */
  readonly seeded?: Seeded;
  readonly bytes?: Uint8Array;
  readonly closed?: boolean;
  readonly error?: string;
}

// Frontend message types after which the backend answers: Sync, Flush, simple Query, CopyDone, CopyFail.
const ANSWERING = new Set(['S', 'H', 'Q', 'c', 'f'].map((c) => c.charCodeAt(0)));

const READY_FOR_QUERY = 'readyForQuery';

/** What the backend answers to `begin` outside a transaction: CommandComplete BEGIN, ReadyForQuery T. */
function beginAnswer(): BackendMessage[] {
  const bytes = Buffer.from([0x43, 0, 0, 0, 10, ...Buffer.from('BEGIN\0', 'latin1'), 0x5a, 0, 0, 0, 5, 0x54]);
  const messages: BackendMessage[] = [];
  new Parser().parse(bytes, (m) => messages.push(m));
  return messages;
}

/**
 * The PGlite thread's young generation (two 2 MiB semi-spaces and V8's share beside them): its JavaScript
 * only carries wire messages to and from the WebAssembly engine, and with V8's default (up to 16 MiB
 * semi-spaces, grown during start-up and kept) an idle server held ~6 MiB more (bench/footprint).
 */
const PGLITE_THREAD_YOUNG_MB = 6;

export class ThreadedPglite implements ProtocolTarget {
  readonly waitReady: Promise<void>;
  /** How a new data directory was filled (known once ready). */
  seeded: Seeded = {};
  private readonly worker: Worker;
  private readonly calls = new Map<number, { resolve(r: ThreadReply): void; reject(e: Error): void }>();
  private nextId = 1;
  private held: Uint8Array[] = [];
  /** `begin` messages among `held`, answered here already (their real answers are dropped). */
  private beginsHeld = 0;
  private failure: Error | undefined;

  /** `seed`: where the thread fills a data directory that holds no database yet from (pglite-template.ts). */
  /** `limits`: the thread's heap limits over the defaults (a test bounds its old generation). */
  constructor(dataDir: string, startParams?: readonly string[], seed?: SeedSources, limits: ResourceLimits = {}) {
    this.worker = new Worker(bootstrap(), {
      eval: true,
      workerData: { dataDir, startParams, seed },
      resourceLimits: { maxYoungGenerationSizeMb: PGLITE_THREAD_YOUNG_MB, ...limits },
    });
    this.waitReady = new Promise<void>((resolve, reject) => {
      this.calls.set(0, {
        resolve: (r) => {
          if (r.error) return reject(new Error(`PGlite failed to open ${dataDir}: ${r.error}`));
          this.seeded = r.seeded ?? {};
          resolve();
        },
        reject,
      });
    });
    this.waitReady.catch(() => undefined);
    this.worker.on('message', (reply: ThreadReply) => {
      const call = this.calls.get(reply.id);
      if (!call) return;
      this.calls.delete(reply.id);
      // An idle database thread does not keep the process alive; one with a call pending does.
      if (this.calls.size === 0) this.worker.unref();
      call.resolve(reply);
    });
    const fail = (e: Error) => {
      this.failure ??= e;
      for (const call of this.calls.values()) call.reject(this.failure);
      this.calls.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the PGlite thread exited (code ${code})`)));
  }

  execProtocolStream(message: Uint8Array): Promise<BackendMessage[]> {
    this.held.push(message);
    // A transaction's `begin` is answered here and travels with its first statement: one round trip to
    // the thread less per transaction. Its real answer is dropped from that statement's reply; should it
    // be an error, that statement fails with it, so the caller rolls back.
    if (isBegin(message) && this.held.length === 1) {
      this.beginsHeld++;
      return Promise.resolve(beginAnswer());
    }
    if (!ANSWERING.has(message[0] ?? 0)) return Promise.resolve([]);
    const bytes = concat(this.held);
    const begins = this.beginsHeld;
    this.held = [];
    this.beginsHeld = 0;
    return this.call({ bytes }, [bytes.buffer as ArrayBuffer]).then((reply) => {
      if (reply.error !== undefined) throw new Error(`PGlite: ${reply.error}`);
      const messages: BackendMessage[] = [];
      if (reply.bytes && reply.bytes.byteLength > 0) {
        const data = Buffer.from(reply.bytes.buffer, reply.bytes.byteOffset, reply.bytes.byteLength);
        new Parser().parse(data, (m) => messages.push(m));
      }
      if (begins === 0) return messages;
      let skipped = 0;
      let at = 0;
      while (skipped < begins && at < messages.length) {
        const m = messages[at++];
        if (m.name === 'error')
          throw Object.assign(new Error(`PGlite: BEGIN failed: ${(m as { message?: string }).message ?? 'error'}`), m);
        if (m.name === READY_FOR_QUERY) skipped++;
      }
      return messages.slice(at);
    });
  }

  /** Close the database on its thread and wait for the thread to end. */
  async close(): Promise<void> {
    if (!this.failure) await this.call({ close: true }).catch(() => undefined);
    await this.worker.terminate().catch(() => undefined);
  }

  private call(request: Omit<ThreadRequest, 'id'>, transfer: ArrayBuffer[] = []): Promise<ThreadReply> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<ThreadReply>((resolve, reject) => {
      this.calls.set(id, { resolve, reject });
      if (this.calls.size === 1) this.worker.ref();
      this.worker.postMessage({ id, ...request } satisfies ThreadRequest, transfer);
    });
  }
}

/** The thread's entry code; from the TypeScript sources (tests, development) through a loader (workers/typescript.ts). */
function bootstrap(): string {
  if (import.meta.url.endsWith('.ts')) return importTypeScriptCode(new URL('./pglite-thread.ts', import.meta.url).href);
  return `import(${JSON.stringify(new URL('./pglite-thread.js', import.meta.url).href)})`;
}
