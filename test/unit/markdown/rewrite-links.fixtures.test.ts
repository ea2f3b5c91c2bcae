// Link rewrite fixtures (test/fixtures/links/m-*): move `from` to `to` in `before/` with planLinkRewrites
// and compare every file with `after/` byte for byte, and what was left alone with `left-alone.json`.
import t from 'tap';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildLinkIndex, parseNote, planLinkRewrites, resolveLink } from '../../../src/markdown/index.js';

const ROOT = path.resolve(import.meta.dirname, '../../fixtures/links');
const UPDATE = process.env.UPDATE_FIXTURES === '1';

function readTree(dir: string, rel = '', out = new Map<string, Buffer>()): Map<string, Buffer> {
  for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) readTree(dir, p, out);
    else out.set(p, readFileSync(path.join(dir, p)));
  }
  return out;
}

/** The vault after the move, and the plan's left-alone list. */
function move(before: Map<string, Buffer>, from: string, to: string) {
  const files = [...before.keys()];
  const pre = buildLinkIndex(files);
  const post = buildLinkIndex([...files.filter((f) => f !== from), to]);
  const sources = files
    .filter((f) => f.endsWith('.md'))
    .map((p) => {
      const text = before.get(p)!.toString('utf8');
      return { path: p, text, model: parseNote(text, { path: p }) };
    });
  const plan = planLinkRewrites(from, to, sources, pre, post, 1000);
  const after = new Map(before);
  after.delete(from);
  after.set(to, before.get(from)!);
  for (const p of plan.plans) after.set(p.path === from ? to : p.path, Buffer.from(p.text, 'utf8'));
  return { after, plan, pre, post, sources };
}

for (const name of readdirSync(ROOT)
  .filter((n) => existsSync(path.join(ROOT, n, 'move.json')))
  .sort()) {
  t.test(name, async (t) => {
    const dir = path.join(ROOT, name);
    const { from, to } = JSON.parse(readFileSync(path.join(dir, 'move.json'), 'utf8')) as { from: string; to: string };
    const before = readTree(path.join(dir, 'before'));
    const { after, plan, pre, post, sources } = move(before, from, to);
    t.equal(plan.problem, undefined);
    if (UPDATE || !existsSync(path.join(dir, 'after'))) {
      rmSync(path.join(dir, 'after'), { recursive: true, force: true });
      for (const [p, bytes] of after) {
        mkdirSync(path.dirname(path.join(dir, 'after', p)), { recursive: true });
        writeFileSync(path.join(dir, 'after', p), bytes);
      }
      writeFileSync(path.join(dir, 'left-alone.json'), `${JSON.stringify(plan.leftAlone, null, 2)}\n`);
    }
    const expected = readTree(path.join(dir, 'after'));
    t.same([...after.keys()].sort(), [...expected.keys()].sort(), 'the same files');
    for (const [p, bytes] of expected) t.equal(after.get(p)?.toString('latin1'), bytes.toString('latin1'), p);
    t.same(plan.leftAlone, JSON.parse(readFileSync(path.join(dir, 'left-alone.json'), 'utf8')));
    // Every link that resolved before resolves to the same file (or the moved file's new path) after.
    for (const src of sources) {
      const srcNew = src.path === from ? to : src.path;
      const links = parseNote(after.get(srcNew)!, { path: srcNew }).links;
      t.equal(links.length, src.model.links.length, `${src.path}: as many links`);
      src.model.links.forEach((l, i) => {
        const r = resolveLink(l.target, src.path, pre);
        if (r.resolved === null) return;
        const want = r.resolved === from ? to : r.resolved;
        const got = resolveLink(links[i].target, srcNew, post).resolved;
        if (got !== want && plan.leftAlone.some((a) => a.path === srcNew && a.line === l.line && a.reason !== 'code'))
          return;
        t.equal(got, want, `${src.path}: ${l.raw} still resolves to ${want}`);
      });
    }
  });
}
