// The clients of the replicas fault scenario (replicas-scenario.ts): writers of both protocol eras that log
// every acknowledged (path, hash), an outside editor writing files straight into vaults, and listeners
// holding subscriptions/listen streams that resume from their get_changes cursor. Loopback only.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import type { ClusterVault, TestCluster } from './cluster.js';

export const sha = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the clients saw, with times: kept beside the logs of a failed run. */
export type Trail = string[];
const stamp = (trail: Trail, line: string) => trail.push(`${new Date().toISOString()} ${line}`);

/** 2026-07-28 clients (stateless: every request stands alone, whichever process it reaches). */
export class ModernClients {
  private readonly open: ClientV2[] = [];

  async connect(base: string, key: string): Promise<ClientV2> {
    const client = new ClientV2(
      { name: 'cluster-modern', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    // A client's own deadline for the version probe (the default is 60 s): a probe lost with a dying
    // process is given up and sent again, as a client that keeps serving would.
    await client.connect(
      new HttpV2(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
      { timeout: 15_000 },
    );
    this.open.push(client);
    return client;
  }

  /** Bounded: a client of a process killed mid-stream must not hold the teardown. */
  close(): Promise<unknown> {
    return Promise.race([Promise.all(this.open.map((m) => m.close().catch(() => undefined))), sleep(5000)]);
  }
}

export interface Workload {
  /** Acknowledged writes per vault name: path → content hash. */
  readonly acked: Map<string, Map<string, string>>;
  /** Files the outside editor wrote. */
  readonly outside: Array<{ vault: string; path: string; content: string }>;
  /** Writes that landed with content other than their own. */
  readonly failures: string[];
  /** The last refusal or error each writer saw. */
  readonly lastError: Map<string, string>;
  /** Calls and acknowledgements per protocol era. */
  readonly eras: Map<string, { calls: number; acked: number }>;
  /** Stop writing and wait for the writers and the editor to finish. */
  stop(): Promise<void>;
}

/**
 * Writers through the balancer, one path per write, each acknowledged (path, hash) logged: vaults at even
 * positions write over 2025 sessions (Mcp-Session-Id, held by the owner), odd ones as 2026-07-28 clients.
 * And an outside editor writing files straight into the first two vaults.
 */
export function startWorkload(
  c: TestCluster,
  vaults: readonly ClusterVault[],
  modern: ModernClients,
  trail: Trail,
): Workload {
  const lb = c.balancer!;
  const acked = new Map<string, Map<string, string>>();
  const failures: string[] = [];
  const lastError = new Map<string, string>();
  const eras = new Map<string, { calls: number; acked: number }>([
    ['2025', { calls: 0, acked: 0 }],
    ['2026-07-28', { calls: 0, acked: 0 }],
  ]);
  let writing = true;
  type Caller = { callTool: (p: { name: string; arguments: Record<string, unknown> }) => Promise<unknown> };
  const writers = vaults.map(async (v, n) => {
    const mine = new Map<string, string>();
    acked.set(v.name, mine);
    const era = eras.get(n % 2 === 0 ? '2025' : '2026-07-28')!;
    const reconnect = async (): Promise<Caller> => {
      for (;;) {
        try {
          // A client's own deadline: a call cut off by its owner's death may never be answered.
          if (n % 2 === 0) {
            const old = await c.connect(lb, v.key, `writer-${v.name}`);
            return { callTool: (p) => old.callTool(p, undefined, { timeout: 5000 }) };
          }
          const client = await modern.connect(lb, v.key);
          return { callTool: (p) => client.callTool(p, { timeout: 5000 }) };
        } catch (e) {
          lastError.set(v.name, String(e).slice(0, 300));
          stamp(trail, `${v.name} reconnect threw ${String(e).slice(0, 200)}`);
          await sleep(100);
        }
      }
    };
    let client = await reconnect();
    for (let i = 0; writing; i++) {
      const p = `w/${v.name}-${i}.md`;
      const content = `# ${v.name} ${i}\n\nwritten by the writer at ${Date.now()}\n`;
      for (let attempt = 0; writing || attempt === 0; attempt++) {
        try {
          era.calls++;
          const r = (await client.callTool({ name: 'create_note', arguments: { path: p, content } })) as {
            isError?: boolean;
            structuredContent?: { content_hash?: string };
            content: unknown;
          };
          if (!r.isError && r.structuredContent?.content_hash) {
            era.acked++;
            mine.set(p, r.structuredContent.content_hash);
            await sleep(200); // about 5 writes a second per vault: 20 a second in all, within two cores
            break;
          }
          const text = JSON.stringify(r.content);
          lastError.set(v.name, text.slice(0, 300));
          stamp(trail, `${v.name} refused ${text.slice(0, 200)}`);
          // A retry of a create that landed before its answer was lost: the file holds our content.
          if (/already_exists/.test(text)) {
            const disk = readFileSync(path.join(v.root, p), 'utf8');
            if (disk === content) mine.set(p, sha(content));
            else failures.push(`${p}: exists with other content`);
            break;
          }
        } catch (e) {
          lastError.set(v.name, String(e).slice(0, 300));
          stamp(trail, `${v.name} threw ${String(e).slice(0, 200)}`);
          // The process holding the stream died; the next attempt reconnects through the balancer.
          client = await reconnect();
        }
        await sleep(100);
      }
    }
  });
  const edited = vaults.slice(0, 2);
  for (const v of edited) mkdirSync(path.join(v.root, 'outside'), { recursive: true });
  const outside: Workload['outside'] = [];
  const editor = (async () => {
    for (let i = 0; writing; i++) {
      const v = edited[i % edited.length];
      const p = `outside/edit-${i}.md`;
      const content = `outside edit ${i}\n`;
      writeFileSync(path.join(v.root, p), content, { flag: 'w' });
      outside.push({ vault: v.name, path: p, content });
      await sleep(250);
    }
  })();
  return {
    acked,
    outside,
    failures,
    lastError,
    eras,
    async stop() {
      writing = false;
      await Promise.all([...writers, editor]);
    },
  };
}

export interface Listener {
  readonly vault: ClusterVault;
  readonly label: string;
  /** Sequence numbers of the change events it read. */
  readonly seen: Set<number>;
  cursor: string;
  delivered: number;
  notifications: number;
  /** Why each stream it held ended. */
  readonly ends: string[];
  lastError?: string;
  /** Resolves when the stream now open ends. */
  ended?: Promise<string>;
  /** When its current stream was opened. */
  openedAt: number;
}

/** A listener's reading client and page size: as a paging client does, a page that failed is asked for
 * again smaller (and retries back off), and the size grows back after a page that was answered. */
interface Reader {
  client?: ClientV2;
  page: number;
}

/**
 * Listeners: 2026-07-28 clients holding subscriptions/listen on vault://changes, opened through the
 * balancer (so often at a non-owner, which forwards the stream). Each notification makes the client read
 * get_changes from its cursor; a stream that ends is reopened through the balancer and the client resumes
 * from its cursor. Every event of the vault must reach it one way or the other; there is no final sweep.
 */
export class Listeners {
  readonly all: Listener[] = [];
  private readonly runs: Array<Promise<void>> = [];
  private listening = true;
  private stopNow!: () => void;
  private readonly stopped = new Promise<void>((r) => {
    this.stopNow = r;
  });

  constructor(
    private readonly c: TestCluster,
    private readonly modern: ModernClients,
    private readonly trail: Trail,
  ) {}

  /** Start listening to a vault; the first stream opens at `firstBase` (the balancer unless given). */
  listen(vault: ClusterVault, label: string, firstBase = this.c.balancer!): Listener {
    const l: Listener = {
      vault,
      label,
      seen: new Set(),
      cursor: 'ev:0',
      delivered: 0,
      notifications: 0,
      ends: [],
      openedAt: 0,
    };
    this.all.push(l);
    let reading: Promise<void> = Promise.resolve();
    const reader: Reader = { page: 100 };
    const catchUp = () => {
      reading = reading.then(() => this.readChanges(l, reader));
      return reading;
    };
    const run = async () => {
      let base = firstBase;
      while (this.listening) {
        try {
          const client = await this.modern.connect(base, vault.key);
          base = this.c.balancer!;
          client.setNotificationHandler('notifications/resources/updated', (n) => {
            if (n.params.uri !== 'vault://changes') return;
            l.notifications++;
            void catchUp();
          });
          const sub = await client.listen({ resourceSubscriptions: ['vault://changes'] });
          l.openedAt = Date.now();
          l.ended = sub.closed;
          // Resume: whatever happened while no stream was open is read from the cursor.
          void catchUp();
          const why = await Promise.race([sub.closed, this.stopped.then(() => 'stopped' as const)]);
          if (why === 'stopped') {
            await Promise.race([sub.close().catch(() => undefined), sleep(3000)]);
            return;
          }
          l.ends.push(why);
          stamp(this.trail, `listener ${l.label} stream ended ${why}`);
        } catch (e) {
          stamp(this.trail, `listener ${l.label} open threw ${String(e).slice(0, 200)}`);
          await sleep(200);
        }
      }
    };
    this.runs.push(run().then(() => reading));
    return l;
  }

  /** Read every event after the listener's cursor (serialised: a notification during a read reads again after it). */
  private async readChanges(l: Listener, reader: Reader): Promise<void> {
    for (let attempt = 0; this.listening || attempt === 0; attempt++) {
      try {
        reader.client ??= await this.modern.connect(this.c.balancer!, l.vault.key);
        for (;;) {
          const asked = Date.now();
          const r = await reader.client.callTool(
            { name: 'get_changes', arguments: { since: l.cursor, limit: reader.page } },
            { timeout: 15_000 },
          );
          const took = Date.now() - asked;
          if (took > 5000) stamp(this.trail, `listener ${l.label} read of ${reader.page} took ${took} ms`);
          reader.page = Math.min(100, reader.page * 2);
          const out = r.structuredContent as
            | { events: Array<{ seq: number }>; next_since: string; more: boolean }
            | undefined;
          if (r.isError || !out) throw new Error(JSON.stringify(r.content).slice(0, 200));
          for (const e of out.events) {
            l.delivered++;
            l.seen.add(e.seq);
          }
          l.cursor = out.next_since;
          if (!out.more) return;
        }
      } catch (e) {
        // A fresh client for the next try (one whose request was cut by a dying process may be spent).
        l.lastError = String(e).slice(0, 200);
        stamp(this.trail, `listener ${l.label} read threw ${l.lastError}`);
        reader.client = undefined;
        reader.page = Math.max(10, Math.floor(reader.page / 2));
        await sleep(Math.min(2000, 200 * (attempt + 1)));
      }
    }
  }

  /** Close every stream and wait (bounded: closing sends a cancel that a busy process may answer late). */
  async stop(): Promise<void> {
    this.listening = false;
    this.stopNow();
    await Promise.race([Promise.all(this.runs), sleep(10_000)]);
  }

  /** Stop without waiting (teardown after an assertion threw midway). */
  abandon(): void {
    this.listening = false;
    this.stopNow();
  }
}
