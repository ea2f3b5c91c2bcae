// Hostile notes through the real server: a note of 200,000 letters (once quadratic to tag-scan) and a
// 40,000-key frontmatter never stall /health or an unrelated read_note; a write that would carry an
// oversized frontmatter block is refused as frontmatter_too_large; edits of a CRLF note keep CRLF.
import t from 'tap';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { refusalOf, textOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const notes = path.resolve(here, '../../../plugins/notes');

const keys = Array.from({ length: 40_000 }, (_, i) => `key_number_${i}: value number ${i}`).join('\n');
const files: Record<string, string> = {
  'Small.md': '# Small\nan ordinary note #tag\n',
  'Wide.md': `---\n${keys}\n---\n# Wide\nbody text\n`,
  'Windows.md': '---\r\ntitle: win\r\n---\r\n# A\r\none\r\n# B\r\ntwo\r\n',
};
const server = await startTestServer({ builtinDir: null, files, config: { plugins: [notes] } });
t.teardown(() => server.close());
const client = await server.connect();
type CallResult = { isError?: boolean; content?: unknown; structuredContent?: unknown };
const call = async (name: string, args: Record<string, unknown>): Promise<CallResult> =>
  (await client.callTool({ name, arguments: args })) as CallResult;
const data = <T = Record<string, any>>(r: CallResult): T => {
  if (r.isError) throw new Error(textOf(r));
  return r.structuredContent as T;
};
const disk = (p: string) => readFileSync(path.join(server.vaultDir, p), 'utf8');

/** Run `work` while polling /health and read_note(Small); the slowest answer of each, in ms. */
async function whileProbing(work: () => Promise<unknown>): Promise<{ health: number; read: number; work: number }> {
  let done = false;
  let health = 0;
  let read = 0;
  const probe = async (f: () => Promise<unknown>, record: (ms: number) => void) => {
    while (!done) {
      const t0 = performance.now();
      await f();
      record(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  const probes = [
    probe(
      () => fetch(`${server.url}/health`).then((r) => r.arrayBuffer()),
      (ms) => (health = Math.max(health, ms)),
    ),
    probe(
      () => call('read_note', { path: 'Small' }).then(data),
      (ms) => (read = Math.max(read, ms)),
    ),
  ];
  await new Promise((r) => setTimeout(r, 100));
  const t0 = performance.now();
  await work();
  const took = performance.now() - t0;
  done = true;
  await Promise.all(probes);
  return { health, read, work: took };
}

t.before(async () => {
  // Boot both worker lanes (thread start and module load take seconds on a busy machine) before timing.
  await call('create_note', { path: 'Warm', content: `# Warm\n${'w '.repeat(20_000)}` }).then(data);
  await call('read_note', { path: 'Warm' }).then(data);
});

t.test('create_note with 200,000 letters stalls neither /health nor an unrelated read_note', async (t) => {
  // Before: the tag scanner's URL pattern was quadratic; the call took 18.6 s and read_note waited 17 s.
  const r = await whileProbing(async () =>
    data(await call('create_note', { path: 'Letters', content: 'a'.repeat(200_000) })),
  );
  t.ok(r.work < 5_000, `create_note took ${r.work.toFixed(0)} ms`);
  t.ok(r.health < 1_000, `slowest /health ${r.health.toFixed(0)} ms`);
  t.ok(r.read < 2_000, `slowest read_note ${r.read.toFixed(0)} ms`);
  const back = data(await call('read_note', { path: 'Letters', limit: 10 }));
  t.equal(back.total_chars, 200_000);
});

t.test('read_note of a 40,000-key frontmatter answers at once with the raw block, marked too_large', async (t) => {
  // Before: 17.7 s, with /health blocked for 15 s.
  let out: Record<string, any> = {};
  const r = await whileProbing(async () => (out = data(await call('read_note', { path: 'Wide' }))));
  t.ok(r.work < 3_000, `read_note took ${r.work.toFixed(0)} ms`);
  t.ok(r.health < 1_000, `slowest /health ${r.health.toFixed(0)} ms`);
  t.equal(out.frontmatter_error?.code, 'too_large');
  t.equal(out.frontmatter, undefined, 'no JSON view of an unparsed block');
  t.ok(out.content.startsWith('# Wide'), 'the body is served');
  t.ok(
    (out.metadata_omissions ?? []).some((m: string) => m.includes('frontmatter')),
    'the omission is said in words too',
  );
});

t.test('a write whose result carries an oversized frontmatter block is refused as frontmatter_too_large', async (t) => {
  const huge = `---\n${keys}\n---\nbody\n`;
  const created = await call('create_note', { path: 'Huge', content: huge });
  t.equal(refusalOf(created)?.code, 'frontmatter_too_large');
  const note = data(await call('read_note', { path: 'Small' }));
  const grow = await call('set_frontmatter', {
    path: 'Small',
    updates: { blob: 'x'.repeat(70_000) },
    expected_hash: note.content_hash,
  });
  t.equal(refusalOf(grow)?.code, 'frontmatter_too_large');
  t.equal(disk('Small.md'), files['Small.md'], 'nothing was written');
  const wide = data(await call('read_note', { path: 'Wide' }));
  const append = await call('edit_note', {
    path: 'Wide',
    content: 'more',
    append: true,
    expected_hash: wide.content_hash,
  });
  t.equal(
    refusalOf(append)?.code,
    'frontmatter_too_large',
    'a note already over the limit is refused too, until its block is cut',
  );
  const cut = data(
    await call('edit_note', {
      path: 'Wide',
      content: '# Wide\nbody text\n',
      replace_frontmatter: true,
      expected_hash: wide.content_hash,
    }),
  );
  t.equal(cut.changed, true);
});

t.test('set_frontmatter, a section edit and an append keep a CRLF note CRLF', async (t) => {
  const loneLf = (s: string): boolean => /(?<!\r)\n/.test(s);
  let hash = data(await call('read_note', { path: 'Windows' })).content_hash;
  hash = data(
    await call('set_frontmatter', {
      path: 'Windows',
      updates: { status: 'done', tags: ['a', 'b'] },
      expected_hash: hash,
    }),
  ).content_hash;
  t.notOk(loneLf(disk('Windows.md')), 'after set_frontmatter');
  hash = data(
    await call('edit_note', { path: 'Windows', section: 'A', content: 'new\nlines\n', expected_hash: hash }),
  ).content_hash;
  t.notOk(loneLf(disk('Windows.md')), 'after a section edit');
  data(await call('edit_note', { path: 'Windows', content: 'tail\nmore\n', append: true, expected_hash: hash }));
  const text = disk('Windows.md');
  t.notOk(loneLf(text), 'after an append');
  t.match(
    text,
    /^---\r\ntitle: win\r\nstatus: done\r\ntags:\r\n {2}- a\r\n {2}- b\r\n---\r\n# A\r\nnew\r\nlines\r\n# B\r\ntwo\r\ntail\r\nmore\r\n$/,
  );
});
