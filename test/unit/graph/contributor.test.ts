// The graph contributor against a real (embedded) database through the index store's applyOps:
// resolution, re-attachment when a note appears, detachment when it goes, renames, aliases, the cap.
import t from 'tap';
import { createHash } from 'node:crypto';
import { rmSync, cpSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { openDatabase, migrate } from '../../../src/host/db/index.js';
import { pgliteTemplate } from '../../../src/host/testing/harness.js';
import { applyOps, type Op } from '../../../src/host/index/store.js';
import { parseNote } from '../../../src/markdown/index.js';
import type { IndexContributor } from '../../../src/sdk/types.js';
import graph from '../../../plugins/graph/family.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-graph-unit-'));
cpSync(await pgliteTemplate(), dir, { recursive: true });
const database = await openDatabase(`pglite:${dir}`, { baseDir: '/' });
t.teardown(async () => {
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});
const db: Kysely<any> = database.db;
await migrate(db, 'family_graph', graph.migrations!);
const vaultId = Number(
  (await sql<{ id: number }>`INSERT INTO vaults (name, root) VALUES ('g', '/tmp/g') RETURNING id`.execute(db)).rows[0]
    .id,
);
let cap = 5000;
const build = graph.indexers as (ctx: unknown) => readonly IndexContributor<any>[];
const contributors = build({
  settings: {
    graph: {
      get maxLinksPerNote() {
        return cap;
      },
    },
  },
}).map((c) => ({ family: 'graph', contributor: c }));
// The cap is read through the settings the contributor was built with; the test moves it with `cap`.

async function prev(p: string) {
  const r = (
    await sql<{
      id: string;
      content_hash: string;
      size: number;
      mtime: Date;
    }>`SELECT id, content_hash, size, mtime FROM notes WHERE vault_id = ${vaultId} AND path = ${p}`.execute(db)
  ).rows[0];
  return r ? { id: Number(r.id), hash: r.content_hash, size: r.size, mtimeMs: new Date(r.mtime).getTime() } : undefined;
}
async function apply(ops: Op[]) {
  await db.transaction().execute((trx) => applyOps(trx, vaultId, ops, contributors, new Date()));
}
async function put(p: string, text: string) {
  const hash = `sha256:${createHash('sha256').update(text).digest('hex')}`;
  await apply([
    {
      op: 'upsert',
      path: p,
      hash,
      size: text.length,
      mtimeMs: Date.now(),
      model: parseNote(text, { path: p }),
      prev: await prev(p),
    },
  ]);
}
async function del(p: string) {
  await apply([{ op: 'remove', path: p, prev: (await prev(p))! }]);
}
async function move(from: string, to: string, text: string) {
  const pv = (await prev(from))!;
  await apply([
    {
      op: 'rename',
      from,
      path: to,
      hash: pv.hash,
      size: pv.size,
      mtimeMs: pv.mtimeMs,
      model: parseNote(text, { path: to }),
      prev: pv,
    },
  ]);
}
async function links(source: string) {
  return (
    await sql<{ target: string; to: string | null; ambiguous: boolean; attachment: boolean; candidates: string[] }>`
    SELECT l.target, t.path AS to, l.ambiguous, l.attachment, l.candidates FROM graph_links l JOIN notes s ON s.id = l.source_id
    LEFT JOIN notes t ON t.id = l.target_id WHERE s.path = ${source} ORDER BY l.ord`.execute(db)
  ).rows;
}

t.test('links resolve, dangle, and re-attach when the target appears', async (t) => {
  await put('A.md', 'See [[B]], [[Missing]], ![[pic.png]] and [md](Sub/C.md) and [[#Local]].\n# Local\n');
  let rows = await links('A.md');
  t.same(
    rows.map((r) => [r.target, r.to, r.attachment]),
    [
      ['B', null, false],
      ['Missing', null, false],
      ['pic.png', null, true],
      ['Sub/C.md', null, false],
      ['', 'A.md', false],
    ],
  );
  await put('B.md', 'back to [[a]]');
  await put('Sub/C.md', 'plain');
  rows = await links('A.md');
  t.equal(rows[0].to, 'B.md', 'dangling [[B]] re-attached when B.md appeared');
  t.equal(rows[3].to, 'Sub/C.md');
  t.equal((await links('B.md'))[0].to, 'A.md', 'case-insensitive name');
});

t.test('ambiguity appears with a second same-named note and goes with it', async (t) => {
  await put('Other/B.md', 'twin');
  let rows = await links('A.md');
  t.equal(rows[0].to, null, 'an ambiguous link belongs to no note, not even the same-folder one');
  t.equal(rows[0].ambiguous, true);
  t.same(rows[0].candidates, ['B.md', 'Other/B.md']);
  await del('Other/B.md');
  rows = await links('A.md');
  t.equal(rows[0].ambiguous, false);
  t.equal(rows[0].to, 'B.md');
});

t.test('deleting a note makes links to it dangling; recreating re-attaches', async (t) => {
  await del('B.md');
  t.equal((await links('A.md'))[0].to, null);
  t.equal(
    (await sql`SELECT 1 FROM graph_links l JOIN notes s ON s.id = l.source_id WHERE s.path = 'B.md'`.execute(db)).rows
      .length,
    0,
  );
  await put('B.md', 'again');
  t.equal((await links('A.md'))[0].to, 'B.md');
});

t.test(
  'rename: links by the old name dangle, links by the new name attach, own relative links re-resolve',
  async (t) => {
    await put('D.md', 'link to [[Renamed]] and [[B]]');
    t.equal((await links('D.md'))[0].to, null);
    await move('B.md', 'Renamed.md', 'again');
    t.equal((await links('A.md'))[0].to, null, '[[B]] no longer resolves');
    t.equal((await links('D.md'))[0].to, 'Renamed.md', '[[Renamed]] now resolves');
    await move('Sub/C.md', 'Sub2/C.md', 'plain');
    t.equal((await links('A.md'))[3].to, null, 'path-qualified [md](Sub/C.md) dangles after the move');
  },
);

t.test('aliases never resolve a link (Obsidian uses them for search and autocomplete only)', async (t) => {
  await put('E.md', 'see [[Nick]] and [[Person|Nick]]');
  await put('Person.md', '---\naliases: [Nick]\n---\nhello');
  t.same(
    (await links('E.md')).map((r) => r.to),
    [null, 'Person.md'],
    'a bare alias dangles; the display-text form resolves by name',
  );
  await put('Person.md', '---\naliases: [Other]\n---\nhello');
  t.same(
    (await links('E.md')).map((r) => r.to),
    [null, 'Person.md'],
  );
});

t.test('the per-note cap stores the first links and marks the note truncated', async (t) => {
  cap = 3;
  await put('Many.md', '[[a1]] [[a2]] [[a3]] [[a4]] [[a5]]');
  const node = (
    await sql<{
      link_count: number;
      links_truncated: boolean;
    }>`SELECT link_count, links_truncated FROM graph_nodes g JOIN notes n ON n.id = g.note_id WHERE n.path = 'Many.md'`.execute(
      db,
    )
  ).rows[0];
  t.same(node, { link_count: 5, links_truncated: true });
  t.equal((await links('Many.md')).length, 3);
  cap = 5000;
});

t.test('one batch (writeMany) leaves the same links as the same notes written one by one', async (t) => {
  const texts: Record<string, string> = {
    'Batch/P.md': 'to [[Q]] and [[R|are]] and [[Nobody]]',
    'Batch/Q.md': '---\naliases: [Queue]\n---\nback to [[P]], and [[Rr]]',
    'Batch/R.md': 'see [[Queue]] and [[Batch/P]]',
    'Loose.md': 'waits for [[Rr]] and [[Queue]]',
  };
  const hashOf = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;
  const snapshot = async () => {
    const out: Record<string, unknown> = {};
    for (const p of [...Object.keys(texts), 'Batch/Rr.md']) out[p] = await links(p);
    return out;
  };
  await put('Loose.md', texts['Loose.md']);
  for (const p of ['Batch/P.md', 'Batch/Q.md', 'Batch/R.md']) await put(p, texts[p]);
  await put('Batch/Rr.md', 'the second R');
  const oneByOne = await snapshot();
  for (const p of ['Batch/P.md', 'Batch/Q.md', 'Batch/R.md', 'Batch/Rr.md']) await del(p);
  const batch = ['Batch/P.md', 'Batch/Q.md', 'Batch/R.md', 'Batch/Rr.md'].map((p) => {
    const text = texts[p] ?? 'the second R';
    return {
      op: 'upsert' as const,
      path: p,
      hash: hashOf(text),
      size: text.length,
      mtimeMs: Date.now(),
      model: parseNote(text, { path: p }),
    };
  });
  await apply(batch);
  t.same(await snapshot(), oneByOne);
  t.equal(
    (await links('Loose.md'))[0].to,
    'Batch/Rr.md',
    'a note outside the batch re-attaches to a note the batch brought',
  );
  t.equal((await links('Loose.md'))[1].to, null, 'an alias the batch brought does not resolve');
  t.equal((await links('Batch/R.md'))[1].to, 'Batch/P.md', 'links inside the batch resolve to each other');
});
