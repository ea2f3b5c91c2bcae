// Concurrent writers in a process of their own, the way remote clients reach a server: a bench forks this
// module (writerProcess), which connects N MCP SDK clients over HTTP and runs `edit_note` appends with
// expected_hash on request. The server's event loop then serves requests and nothing else, so its
// writes/s is not shared with the clients' JSON, HTTP and SDK work (they still share the machine's cores).
import { fork } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { refusalOf } from '../../src/host/testing/testkit.js';

/** Each writer appends `writes` times to its own note, chaining the hash each answer returns. */
interface DistinctJob {
  readonly kind: 'distinct';
  readonly paths: readonly string[];
  readonly hashes: readonly string[];
  readonly writes: number;
  readonly tag: string;
}

/** Every writer appends `writes` times to one note; a stale hash is re-read and the append retried. */
interface SharedJob {
  readonly kind: 'shared';
  readonly path: string;
  readonly writes: number;
  readonly tag: string;
}

type Request =
  | { type: 'connect'; url: string; key: string; writers: number }
  | { type: 'run'; job: DistinctJob | SharedJob }
  | { type: 'exit' };
type Reply = { type: 'ready' } | { type: 'done'; ms: number; conflicts: number } | { type: 'failed'; message: string };

export interface WriterProcess {
  distinct(paths: readonly string[], hashes: readonly string[], writes: number, tag: string): Promise<{ ms: number }>;
  shared(path: string, writes: number, tag: string): Promise<{ ms: number; conflicts: number }>;
  close(): void;
}

/** Fork the writer process and connect its `writers` clients to the server at `url`. */
export async function writerProcess(url: string, key: string, writers: number): Promise<WriterProcess> {
  const child = fork(new URL(import.meta.url).pathname, [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, EXO_BENCH_WRITERS: '1' },
  });
  const ask = (request: Request) =>
    new Promise<Reply>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the writer process exited (${code})`));
      child.once('exit', onExit);
      child.once('message', (reply: Reply) => {
        child.off('exit', onExit);
        if (reply.type === 'failed') reject(new Error(reply.message));
        else resolve(reply);
      });
      child.send(request);
    });
  await ask({ type: 'connect', url, key, writers });
  const run = async (job: DistinctJob | SharedJob) => {
    const reply = await ask({ type: 'run', job });
    if (reply.type !== 'done') throw new Error(`unexpected reply ${reply.type}`);
    return reply;
  };
  return {
    distinct: (paths, hashes, writes, tag) => run({ kind: 'distinct', paths, hashes, writes, tag }),
    shared: (path, writes, tag) => run({ kind: 'shared', path, writes, tag }),
    close: () => {
      if (child.connected) child.send({ type: 'exit' } satisfies Request);
    },
  };
}

type Result = { isError?: boolean; content?: unknown; structuredContent?: Record<string, any> };

async function serve(): Promise<void> {
  const clients: Client[] = [];
  const call = async (c: Client, name: string, args: Record<string, unknown>) =>
    (await c.callTool({ name, arguments: args })) as Result;
  const must = async (c: Client, name: string, args: Record<string, unknown>) => {
    const r = await call(c, name, args);
    if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content).slice(0, 300)}`);
    return r.structuredContent!;
  };
  const distinct = async (job: DistinctJob) => {
    await Promise.all(
      job.paths.map(async (p, w) => {
        let hash = job.hashes[w];
        for (let i = 0; i < job.writes; i++) {
          hash = (
            await must(clients[w], 'edit_note', {
              path: p,
              content: `\n- writer ${w} edit ${job.tag}.${i}\n`,
              append: true,
              expected_hash: hash,
            })
          ).content_hash;
        }
      }),
    );
    return 0;
  };
  const shared = async (job: SharedJob) => {
    let conflicts = 0;
    await Promise.all(
      clients.map(async (c, w) => {
        let hash = (await must(c, 'get_notes_info', { paths: [job.path] })).notes[0].content_hash as string;
        for (let done = 0; done < job.writes; ) {
          const r = await call(c, 'edit_note', {
            path: job.path,
            content: `\n- shared writer ${w} edit ${job.tag}.${done}\n`,
            append: true,
            expected_hash: hash,
          });
          const refusal = refusalOf(r);
          if (!refusal) {
            hash = r.structuredContent!.content_hash;
            done++;
          } else if (refusal.code === 'stale_precondition' || refusal.code === 'concurrent_write') {
            conflicts++;
            hash = (await must(c, 'get_notes_info', { paths: [job.path] })).notes[0].content_hash;
          } else throw new Error(`edit_note on one note: ${refusal.code}`);
        }
      }),
    );
    return conflicts;
  };
  process.on('message', async (m: Request) => {
    try {
      if (m.type === 'connect') {
        for (let i = 0; i < m.writers; i++) {
          const c = new Client({ name: `bench-writer-${i}`, version: '1' });
          await c.connect(
            new StreamableHTTPClientTransport(new URL(`${m.url}/mcp`), {
              requestInit: { headers: { Authorization: `Bearer ${m.key}` } },
            }),
          );
          clients.push(c);
        }
        process.send!({ type: 'ready' } satisfies Reply);
      } else if (m.type === 'run') {
        const started = performance.now();
        const conflicts = m.job.kind === 'distinct' ? await distinct(m.job) : await shared(m.job);
        process.send!({ type: 'done', ms: performance.now() - started, conflicts } satisfies Reply);
      } else {
        await Promise.allSettled(clients.map((c) => c.close()));
        process.exit(0);
      }
    } catch (e) {
      process.send!({ type: 'failed', message: e instanceof Error ? e.message : String(e) } satisfies Reply);
    }
  });
}

if (process.env.EXO_BENCH_WRITERS === '1' && process.send) void serve();
