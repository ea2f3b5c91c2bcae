// Issue 35 through the real server and an SDK client: a 40 KB note whose frontmatter is `deep: ` with 20,000
// `[` then 20,000 `]` ended the whole process (`FATAL ERROR: RegExpCompiler Allocation failed`) on the next
// get_note_outline, edit_note dry run or read_note — 4 of 4 runs. Now its frontmatter is a typed too_deep
// error, the note reads as text, and the server answers. The same brackets in the body, and a 60,000-letter
// word, once took 8.5 s and 15 s (timeout) to read, starving other callers' reads on the interactive lane.
// Time bounds are generous for a loaded two-core machine (about 10× what an idle one needs).
import t, { type Test } from 'tap';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { refusalOf, textOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const notes = path.resolve(here, '../../../plugins/notes');

const N = 20_000;
const deepYaml = `deep: ${'['.repeat(N)}${']'.repeat(N)}`;
let seed = 35;
const word = Array.from({ length: 60_000 }, () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return String.fromCharCode(97 + (seed % 26));
}).join('');
const files: Record<string, string> = {
  'Small.md': '# Small\nan ordinary note #tag\n',
  // Planted as an outside editor or a sync client would: never through our write path.
  'Planted.md': `---\n${deepYaml}\n---\n# Planted\nbody [[Small]]\n`,
  'Word.md': `# Word\n${word}\n`,
};
const server = await startTestServer({ builtinDir: null, files, config: { plugins: [notes] } });
t.teardown(() => server.close());
const client = await server.connect();
const reader = await server.connect({ key: server.readKey, name: 'reader' });
type CallResult = { isError?: boolean; content?: unknown; structuredContent?: unknown };
const call = async (name: string, args: Record<string, unknown>, c = client): Promise<CallResult> =>
  (await c.callTool({ name, arguments: args })) as CallResult;
const data = <T = Record<string, any>>(r: CallResult): T => {
  if (r.isError) throw new Error(textOf(r));
  return r.structuredContent as T;
};
const alive = async (t: Test) =>
  t.equal(data(await call('read_note', { path: 'Small' }, reader)).title, 'Small', 'the server still answers');

t.test('a deeply nested frontmatter is a typed too_deep error, and every reading tool answers', async (t) => {
  const created = data(
    await call('create_note', { path: 'Deep', content: `---\n${deepYaml}\n---\n# Deep\nbody [[Small]]\n` }),
  );
  t.equal(created.changed, true, 'create_note succeeds, as before');
  for (const p of ['Deep', 'Planted']) {
    for (let round = 0; round < 2; round++) {
      const outline = data(await call('get_note_outline', { path: p }));
      t.same(
        outline.headings.map((h: { text: string }) => h.text),
        [p],
        `${p}: the outline is the body's`,
      );
      const read = data(await call('read_note', { path: p }, reader));
      t.equal(read.frontmatter_error?.code, 'too_deep', `${p}: read_note names the defect`);
      t.equal(read.frontmatter, undefined, `${p}: no JSON view`);
      t.ok(read.content.includes('['.repeat(1000)), `${p}: the note stays readable as text`);
      const dry = data(
        await call('edit_note', {
          path: p,
          content: 'more',
          append: true,
          dry_run: true,
          expected_hash: read.content_hash,
        }),
      );
      t.equal(dry.dry_run, true, `${p}: an edit_note dry run answers`);
      const fm = await call('set_frontmatter', { path: p, updates: { status: 'x' }, expected_hash: read.content_hash });
      t.equal(refusalOf(fm)?.code, 'malformed_frontmatter', `${p}: a frontmatter edit is refused, never repaired`);
      await alive(t);
    }
  }
});

/** The slowest read_note(Small) answered while `work` runs, in ms, and how long the work took. */
async function whileReading(work: () => Promise<unknown>): Promise<{ read: number; work: number }> {
  let done = false;
  let read = 0;
  const probe = (async () => {
    while (!done) {
      const t0 = performance.now();
      data(await call('read_note', { path: 'Small' }));
      read = Math.max(read, performance.now() - t0);
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  const t0 = performance.now();
  await work();
  const took = performance.now() - t0;
  done = true;
  await probe;
  return { read, work: took };
}

t.test('bracket runs in the body and a 60,000-letter word read in bounded time, without starving others', async (t) => {
  data(await call('create_note', { path: 'Brackets', content: `# B\n${'['.repeat(N)}${']'.repeat(N)}\n` }));
  await call('read_note', { path: 'Small' }, reader); // boot the lanes before timing
  for (const p of ['Brackets', 'Word']) {
    let out: Record<string, any> = {};
    const r = await whileReading(async () => (out = data(await call('read_note', { path: p }, reader))));
    t.ok(out.content.length > 0 && out.total_chars > 40_000, `${p}: answered (a window, within the result budget)`);
    // Before: 8.5 s (Brackets) and a 15 s timeout (Word); now tens of ms warm.
    t.ok(r.work < 10_000, `${p}: read_note took ${r.work.toFixed(0)} ms`);
    t.ok(r.read < 5_000, `${p}: the slowest concurrent read_note(Small) took ${r.read.toFixed(0)} ms`);
  }
  await alive(t);
});
