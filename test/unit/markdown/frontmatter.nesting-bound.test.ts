// Frontmatter nesting is bounded before yaml composes anything: `deep: [[[[…]]]]` with 20,000 brackets once
// ended the whole process (yaml's composer recursed to the stack limit, and V8 treats a regular expression
// compiled there as a fatal out-of-memory; issue 35). A block over the bound is kept as raw text with a
// typed `too_deep` error; the note stays readable and its body is parsed as usual.
import t from 'tap';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FRONTMATTER_MAX_DEPTH, parseDocumentBounded, parseNote } from '../../../src/markdown/index.js';
import { typescriptArgs } from '../../../src/host/testing/cli.js';

const note = (yaml: string) => `---\n${yaml}\n---\n# Title\nbody [[Link]] #tag\n`;
const brackets = (n: number) => `deep: ${'['.repeat(n)}${']'.repeat(n)}`;

t.test('every way of nesting past the bound is refused as too_deep, cheaply, with the body intact', async (t) => {
  const n = 20_000;
  const cases: Record<string, string> = {
    'flow sequences': brackets(n),
    'flow mappings': `deep: ${'{a: '.repeat(n / 2)}${'}'.repeat(n / 2)}`,
    'compact block sequences': `deep:\n${'- '.repeat(n)}x`,
    'explicit keys': `${'? '.repeat(n)}x`,
    'indented block mappings': Array.from({ length: 120 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n'),
    'mixed flow and block': `deep:\n${'- ['.repeat(n / 4)}${']'.repeat(n / 4)}`,
  };
  for (const [name, yaml] of Object.entries(cases)) {
    const t0 = performance.now();
    const m = parseNote(note(yaml), { path: 'Deep.md' });
    const ms = performance.now() - t0;
    t.equal(m.frontmatter.error?.code, 'too_deep', name);
    t.equal(m.frontmatter.error?.limit, FRONTMATTER_MAX_DEPTH, `${name}: names the limit`);
    t.equal(m.frontmatter.data, null, `${name}: no JSON view`);
    t.equal(m.frontmatter.text, yaml + '\n', `${name}: the raw block is kept`);
    t.same(
      m.outline.map((h) => h.text),
      ['Title'],
      `${name}: the body is parsed`,
    );
    t.ok(
      m.links.some((l) => l.target === 'Link'),
      `${name}: links in the body are found`,
    );
    // Generous for a loaded two-core machine (measured 1-20 ms; the composer alone took 0.3-1.5 s).
    t.ok(ms < 5_000, `${name}: ${ms.toFixed(0)} ms`);
  }
});

t.test('nesting up to the bound parses as before, and brackets inside scalars do not count', async (t) => {
  const m = parseNote(
    note(
      `${brackets(FRONTMATTER_MAX_DEPTH - 1)}\ntitle: "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["\nplain: a ${'['.repeat(100)}\n# ${'['.repeat(100)}`,
    ),
    {
      path: 'Ok.md',
    },
  );
  t.equal(m.frontmatter.error, undefined);
  let v: unknown = m.frontmatter.data?.deep;
  let depth = 0;
  while (Array.isArray(v)) {
    depth++;
    v = v[0];
  }
  t.equal(depth, FRONTMATTER_MAX_DEPTH - 1, 'the nested value is kept whole');
  t.equal(m.frontmatter.data?.plain, `a ${'['.repeat(100)}`);
  const over = parseNote(note(brackets(FRONTMATTER_MAX_DEPTH)), { path: 'Over.md' });
  t.equal(over.frontmatter.error?.code, 'too_deep', 'one level more (with the top mapping) is over');
});

t.test('parseDocumentBounded answers like parseDocument below the bound', async (t) => {
  const ok = parseDocumentBounded('a: [1, {b: 2}]\n---\nc: 3\n', 8);
  t.ok(ok.ok);
  if (ok.ok) {
    t.same(ok.doc.toJS(), { a: [1, { b: 2 }] });
    t.match(
      ok.doc.errors.map((e) => e.code),
      ['MULTIPLE_DOCS'],
      'a second document is an error, as in parseDocument',
    );
  }
  const over = parseDocumentBounded('a: [[[1]]]\n', 3);
  t.same(over, { ok: false, depth: 4, offset: 5 }, 'the top mapping is level 1; the third bracket crosses the bound');
});

t.test('property: at any bound, a document is composed exactly when it nests no deeper than the bound', async (t) => {
  // Small bounds put sources with just as many indicator characters as the bound on both sides of it: the
  // shortcut that skips the depth checks (no more `:` `?` `-` `[` `{` than the bound) and the checks themselves.
  const depthOf = (v: unknown): number =>
    Array.isArray(v)
      ? 1 + Math.max(0, ...v.map(depthOf))
      : v !== null && typeof v === 'object'
        ? 1 + Math.max(0, ...Object.values(v).map(depthOf))
        : 0;
  const value = fc.letrec((tie) => ({
    node: fc.oneof(
      { depthSize: 'small' },
      fc.constantFrom(1, 'x', true, null),
      fc.array(tie('node'), { minLength: 1, maxLength: 2 }),
      fc.dictionary(fc.constantFrom('a', 'b'), tie('node'), { minKeys: 1, maxKeys: 2 }),
    ),
  })).node;
  let composed = 0;
  let refused = 0;
  fc.assert(
    fc.property(value, fc.boolean(), fc.integer({ min: 1, max: 6 }), (v, flow, bound) => {
      const source = stringify(v, { collectionStyle: flow ? 'flow' : 'block' });
      const depth = depthOf(v);
      const r = parseDocumentBounded(source, bound);
      if (depth > bound) {
        refused++;
        return !r.ok;
      }
      composed++;
      return r.ok && JSON.stringify(r.doc.toJS()) === JSON.stringify(v);
    }),
    { numRuns: 3000 },
  );
  t.ok(
    composed > 300 && refused > 300,
    `both sides of the bound were tried (${composed} composed, ${refused} refused)`,
  );
});

t.test('the worker pool parsing the note survives (it once ended the process)', async (t) => {
  // In a child process, so a regression fails this test instead of killing the test runner.
  const pool = new URL('../../../src/host/workers/pool.ts', import.meta.url).href;
  const script = `
    const { PiscinaPool } = await import(${JSON.stringify(pool)});
    const pool = new PiscinaPool({ threads: 1, idleTimeoutMs: 1000, taskTimeoutMs: 0 });
    const bytes = new TextEncoder().encode('---\\ndeep: ' + '['.repeat(20000) + ']'.repeat(20000) + '\\n---\\nbody\\n');
    const codes = [];
    for (let i = 0; i < 3; i++) {
      const [m] = await pool.run('parse-notes', [{ path: 'D.md', bytes }], { lane: i % 2 ? 'bulk' : 'interactive' });
      codes.push(m.frontmatter.error?.code);
    }
    await pool.close();
    console.log(JSON.stringify(codes));
  `;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-nesting-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'parse-deep.mjs');
  writeFileSync(file, script);
  const r = spawnSync(process.execPath, [...typescriptArgs(), file], {
    encoding: 'utf8',
    timeout: 90_000,
  });
  t.equal(r.status, 0, `exit status (stderr: ${r.stderr.slice(0, 300)})`);
  t.same(JSON.parse(r.stdout.trim().split('\n').pop() || 'null'), ['too_deep', 'too_deep', 'too_deep']);
});
