// A 2.4 MB note of 50,000 tasks (issue 35) through the real server: what crosses back from the worker pool
// is what each caller reads (a read gets its fields and the lists' lengths, never the 50,000 tasks; the
// index gets the long lists as JSON slices, rebuilt a slice per event-loop turn), another caller's small
// read is answered while the note is indexed, and every answer is what the whole model would give. The
// event-loop delay is reported, not asserted (bench/hostile-note-stalls.ts measures it).
import t from 'tap';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { serialize } from 'node:v8';
import { textOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { WorkerPool } from '../../../src/sdk/types.js';

t.setTimeout(900_000);
const slow = { timeout: 600_000 };

const TASKS = 50_000;
const big = `# Tasks\n${Array.from(
  { length: TASKS },
  (_, i) => `- [ ] planted task ${i} with some words [[Link${i % 100}]] #t${i % 50}`,
).join('\n')}\n`;

// A parse of this note takes 1–2 s on an idle machine and over 15 s (the default task budget) on a loaded one;
// the budgets are raised so that only the assertions below can fail.
const server = await startTestServer({
  files: { 'Tiny.md': '# Tiny\na small note #small\n' },
  config: { workers: { taskTimeoutMs: 300_000 }, tools: { callTimeoutMs: 300_000 } },
});
t.teardown(() => server.close());
const client = await server.connect();
const other = await server.connect();
type CallResult = { isError?: boolean; content?: unknown; structuredContent?: unknown };
const call = async (c: typeof client, name: string, args: Record<string, unknown>): Promise<Record<string, any>> => {
  const r = (await c.callTool({ name, arguments: args })) as CallResult;
  if (r.isError) throw new Error(textOf(r));
  return r.structuredContent as Record<string, any>;
};

// Observe the real pool: every parse result that comes back to the event loop, as V8 would clone it.
interface Crossing {
  readonly lane: string;
  readonly bytes: number;
  readonly longestList: number;
}
const crossings: Crossing[] = [];
const pool = server.host.workers as WorkerPool;
const run = pool.run.bind(pool);
pool.run = async <T>(
  task: Parameters<WorkerPool['run']>[0],
  payload: unknown,
  options?: Parameters<WorkerPool['run']>[2],
) => {
  const result = await run<T>(task, payload, options);
  if (task === 'parse-notes') {
    for (const r of result as Array<Record<string, unknown>>) {
      const model = (r.packed ? r.model : r) as Record<string, unknown>;
      const longestList = Math.max(0, ...Object.values(model).map((v) => (Array.isArray(v) ? v.length : 0)));
      crossings.push({ lane: options?.lane ?? 'interactive', bytes: serialize(r).byteLength, longestList });
    }
  }
  return result;
};

t.before(async () => {
  // Boot both worker lanes before anything is measured.
  await call(client, 'create_note', { path: 'Warm', content: `# Warm\n${'w '.repeat(20_000)}` });
  await call(client, 'read_note', { path: 'Warm' });
  await call(other, 'read_note', { path: 'Tiny' });
});

t.test('planted, the note is indexed in slices while another caller reads a small note', slow, async (t) => {
  crossings.length = 0;
  const delay = monitorEventLoopDelay({ resolution: 10 });
  let indexed = false;
  let tinyReads = 0;
  const tiny = (async () => {
    while (!indexed) {
      const r = await call(other, 'read_note', { path: 'Tiny' });
      if (r.content.includes('a small note')) tinyReads++;
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  delay.enable();
  writeFileSync(path.join(server.vaultDir, 'Tasks.md'), big);
  let total = 0;
  for (let i = 0; i < 1200 && total < TASKS; i++) {
    total = (await call(client, 'list_tasks', { folder: '', limit: 1 })).total;
    if (total < TASKS) await new Promise((r) => setTimeout(r, 250));
  }
  delay.disable();
  indexed = true;
  await tiny;
  t.equal(total, TASKS, 'every task is indexed');
  const bulk = crossings.filter((c) => c.lane === 'bulk');
  t.ok(bulk.length > 0, 'the index parsed the note in the pool');
  t.ok(
    bulk.every((c) => c.longestList <= 2_000),
    `no list over 2,000 objects crossed to the event loop (longest ${Math.max(...bulk.map((c) => c.longestList))})`,
  );
  t.ok(tinyReads >= 1, `the small note was read ${tinyReads} times while the big one was indexed`);
  // Reported, not asserted: on a 2-core machine at a load average of 40 the slowest turn measured 3 s, which
  // CPU starvation alone can explain; the structural checks above are the regression guard (bench for figures).
  t.comment(
    `slowest event-loop turn ${(delay.max / 1e6).toFixed(0)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(0)} ms`,
  );
});

t.test('reads of the note get their fields and counts back, not its 50,000 tasks', slow, async (t) => {
  const read = async (name: string, args: Record<string, unknown>) => {
    crossings.length = 0;
    const out = await call(client, name, args);
    return { out, crossed: crossings.map((c) => c.bytes) };
  };
  const note = await read('read_note', { path: 'Tasks', limit: 200 });
  t.same(
    note.out.tags,
    Array.from({ length: 50 }, (_, i) => `t${i}`),
    'the tag list is whole',
  );
  t.equal(note.out.title, 'Tasks');
  const outline = await read('get_note_outline', { path: 'Tasks' });
  t.equal(outline.out.total, 1);
  const info = await read('get_notes_info', { paths: ['Tasks'] });
  t.match(
    info.out.notes[0],
    { tasks: TASKS, links: TASKS, headings: 1, title: 'Tasks' },
    'counts are the whole model’s',
  );
  t.equal(info.out.notes[0].tags.length, 50);
  const lines = await read('read_note_lines', { path: 'Tasks', start_line: 2, line_count: 1 });
  t.match(lines.out.content, /^- \[ \] planted task 0 /);
  for (const [name, r] of Object.entries({ note, outline, info })) {
    t.equal(r.crossed.length, 1, `${name}: one parse in the pool`);
    // The whole model of this note serialises to about 26 MB (read_note's view: 2.9 KB).
    t.ok(r.crossed[0] < 64 * 1024, `${name}: ${r.crossed[0]} bytes crossed back`);
  }
  t.equal(lines.crossed.length, 0, 'read_note_lines parses nothing');
});

t.test('a big note embedding a base: one parse, and only its .base embeds cross back', slow, async (t) => {
  const links = Array.from({ length: 3_000 }, (_, i) => `- see [[Other note number ${i}]] and ![[picture ${i}.png]]`);
  writeFileSync(path.join(server.vaultDir, 'Books.base'), 'views:\n  - type: table\n    name: Mine\n');
  await call(client, 'create_note', {
    path: 'Shelf',
    content: `# Shelf\n${links.join('\n')}\n\n![[Books.base#Mine]]\n`,
  });
  crossings.length = 0;
  const out = await call(client, 'read_note', { path: 'Shelf', limit: 200 });
  t.same(
    out.bases,
    [{ kind: 'embed', line: links.length + 3, target: 'Books.base', query: { path: 'Books.base', view: 'Mine' } }],
    'the embed is reported as a query_base reference',
  );
  t.equal(crossings.length, 1, 'the note is parsed once');
  // 6,000 links would be about 600 KB; only the one .base embed crosses.
  t.ok(crossings[0]!.bytes < 16 * 1024, `${crossings[0]!.bytes} bytes crossed back`);
});
