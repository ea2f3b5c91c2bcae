// The graph family end to end on a copy of the obsidian-tasks-docs corpus: backlinks and links against
// an independent count from the files, neighbourhood, orphans, audit, find_related's refusal, and
// graph rows following deletes and moves. Uses the host's index when it serves one, else applies the
// index store directly (the same contributor calls the pipeline makes).
import t from 'tap';
import { corpus as corpusPath, notesOnDisk } from '../../fixtures/corpus.js';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { fileURLToPath } from 'node:url';
import { refusalOf as refusalOfResult, textOf as textOfResult } from '../../../src/host/testing/testkit.js';
import { startTestServer, type TestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import { applyOps, type Op } from '../../../src/host/index/store.js';
import { parseNote } from '../../../src/markdown/index.js';

// The SDK's callTool result type is wider than the test kit's parameter; these narrow it once.
const textOf = (r: unknown): string => textOfResult(r as { content?: unknown });
const refusalOf = (r: unknown) => refusalOfResult(r as { isError?: boolean; content?: unknown });

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const corpus = corpusPath('obsidian-tasks-docs');
const server = await startTestServer({
  builtinDir: null,
  copyVaultFrom: corpus,
  config: { plugins: [path.join(root, 'plugins/graph')], index: { watch: false, reconcileSeconds: 0 } },
});
t.teardown(() => server.close());
const client = await server.connect();
const db = server.host.database.db;
const vaultId = server.host.vaultHandle.id;
const index = server.host.services.named.get('index') as IndexService | undefined;

async function prevOf(p: string) {
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
  const contributors = server.host.manager.registry.contributors();
  await db.transaction().execute((trx) => applyOps(trx, vaultId, ops, contributors as never, new Date()));
}
async function upsertOp(p: string): Promise<Op> {
  const bytes = readFileSync(path.join(server.vaultDir, p));
  return {
    op: 'upsert',
    path: p,
    hash: `sha256:${createHash('sha256').update(bytes).digest('hex')}`,
    size: bytes.length,
    mtimeMs: Date.now(),
    model: parseNote(bytes, { path: p }),
    prev: await prevOf(p),
  };
}
/** Index the vault the way the pipeline would (only when the host has no index service yet). */
async function scan(s: TestServer) {
  const files = notesOnDisk(s.vaultDir);
  for (let i = 0; i < files.length; i += 40) await apply(await Promise.all(files.slice(i, i + 40).map(upsertOp)));
}
if (index) await index.whenReady(vaultId, 30_000);
else await scan(server);

/** Independent counter: wikilinks and .md markdown links outside code, by lower-cased basename. */
function countLinksTo(name: string): { total: number; sources: Set<string> } {
  const key = name.toLowerCase();
  let total = 0;
  const sources = new Set<string>();
  for (const p of notesOnDisk(corpus)) {
    if (p.toLowerCase().endsWith(`/${key}.md`) || p.toLowerCase() === `${key}.md`) continue; // self-links never count
    const text = readFileSync(path.join(corpus, p), 'utf8')
      .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')
      .replace(/`[^`\n]*`/g, '');
    const targets: string[] = [];
    for (const m of text.matchAll(/!?\[\[([^\]\n]+?)\]\]/g))
      targets.push(m[1].split('|')[0].split('#')[0].replace(/\\+$/, ''));
    // markdown links to local notes: `.md` or no extension at all, no URL scheme
    for (const m of text.matchAll(/!?\[[^\]\n]*\]\(<?([^)\s>#]+)(#[^)\s>]*)?>?\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(m[1]) || /\.(?!md$)[A-Za-z0-9]{1,5}$/.test(m[1])) continue;
      targets.push(decodeURIComponent(m[1]));
    }
    for (const tg of targets) {
      const base = tg.trim().split('/').pop()!.toLowerCase().replace(/\.md$/, '');
      if (base === key) {
        total++;
        sources.add(p);
      }
    }
  }
  return { total, sources };
}

t.test('get_backlinks matches an independent count from the corpus files', async (t) => {
  for (const [note, name] of [
    ['Queries/Filters.md', 'Filters'],
    ['Getting Started/Dates.md', 'Dates'],
    ['Getting Started/Priority.md', 'Priority'],
  ]) {
    const expected = countLinksTo(name);
    const r = await client.callTool({ name: 'get_backlinks', arguments: { path: note, limit: 500 } });
    t.notOk(r.isError, r.isError ? textOf(r) : '');
    const o = r.structuredContent as { total: number; backlinks: Array<{ source: string }> };
    t.equal(o.total, expected.total, `${note}: backlink count`);
    t.same(new Set(o.backlinks.map((b) => b.source)), expected.sources, `${note}: sources`);
    t.match(textOf(r), new RegExp(`^Found ${expected.total} backlinks to`));
  }
  const missing = refusalOf(await client.callTool({ name: 'get_backlinks', arguments: { path: 'No/Such.md' } }))!;
  t.equal(missing.code, 'not_found');
});

t.test('get_links lists outgoing links in document order, grouped', async (t) => {
  const r = await client.callTool({ name: 'get_links', arguments: { path: 'Introduction.md' } });
  t.notOk(r.isError, r.isError ? textOf(r) : '');
  const o = r.structuredContent as {
    links: Array<{ status: string; position: number; resolved_path: string | null }>;
    counts: Record<string, number>;
    truncated: boolean;
  };
  t.ok(o.links.length > 0);
  t.same(
    o.links.map((l) => l.position),
    [...o.links.map((l) => l.position)].sort((a, b) => a - b),
    'document order',
  );
  t.equal(o.truncated, false);
  for (const l of o.links.filter((x) => x.status === 'resolved')) t.ok(l.resolved_path);
  t.match(textOf(r), /resolved/);
});

t.test('get_neighborhood walks both directions with distances and via', async (t) => {
  const r = await client.callTool({
    name: 'get_neighborhood',
    arguments: { path: 'Queries/Filters.md', depth: 2, limit: 200 },
  });
  t.notOk(r.isError, r.isError ? textOf(r) : '');
  const o = r.structuredContent as { notes: Array<{ path: string; distance: number; via: string }>; count: number };
  const d1 = o.notes.filter((n) => n.distance === 1).map((n) => n.path);
  for (const src of countLinksTo('Filters').sources) t.ok(d1.includes(src), `${src} is a direct neighbour`);
  t.ok(
    o.notes.some((n) => n.distance === 2),
    'reaches depth 2',
  );
  for (const n of o.notes.filter((x) => x.distance === 2)) t.ok(d1.includes(n.via), 'via is a depth-1 note');
  t.notOk(
    o.notes.some((n) => n.path === 'Queries/Filters.md'),
    'the start note is not listed',
  );
  const small = (
    await client.callTool({ name: 'get_neighborhood', arguments: { path: 'Queries/Filters.md', depth: 3, limit: 5 } })
  ).structuredContent as { count: number; truncated: boolean };
  t.same([small.count, small.truncated], [5, true]);
});

t.test('find_orphans and audit_notes report from the index', async (t) => {
  const r = await client.callTool({ name: 'find_orphans', arguments: {} });
  t.notOk(r.isError, r.isError ? textOf(r) : '');
  const o = r.structuredContent as { total: number; not_indexed: number; orphans: Array<{ path: string }> };
  t.equal(o.not_indexed, 0);
  for (const x of o.orphans)
    t.equal(countLinksTo(path.basename(x.path, '.md')).total, 0, `${x.path} has no incoming links`);
  const a = await client.callTool({
    name: 'audit_notes',
    arguments: { classes: ['orphans', 'dangling_links', 'duplicate_basenames'], limit: 5 },
  });
  t.notOk(a.isError, a.isError ? textOf(a) : '');
  const sections = (a.structuredContent as { sections: Array<{ class: string; total: number }> }).sections;
  t.same(
    sections.map((s) => s.class),
    ['orphans', 'dangling_links', 'duplicate_basenames'],
  );
  t.equal(sections[0].total, o.total, 'audit orphans agree with find_orphans');
  const dangling = (sections[1] as unknown as { items: Array<{ count: number; paths: string[]; paths_total: number }> })
    .items;
  t.ok(dangling.length > 0, 'the corpus has dangling links');
  for (const i of dangling)
    t.ok(
      i.paths.length <= 5 && i.paths.length <= i.paths_total && i.paths_total <= i.count,
      'sample of at most 5 notes, with the full count',
    );
  t.same(
    dangling.map((i) => i.count),
    [...dangling.map((i) => i.count)].sort((x, y) => y - x),
    'most-linked missing targets first',
  );
});

t.test('find_related is hidden, and refused cleanly, without an embeddings provider', async (t) => {
  t.notOk(
    (await client.listTools()).tools.some((x) => x.name === 'find_related'),
    'not listed',
  );
  const r = refusalOf(await client.callTool({ name: 'find_related', arguments: { path: 'Queries/Filters.md' } }))!;
  t.equal(r.code, 'service_unavailable');
  t.equal(r.service, 'embeddings');
});

t.test('deleting and moving notes updates backlinks without a rescan', async (t) => {
  const before = (
    await client.callTool({ name: 'get_backlinks', arguments: { path: 'Getting Started/Dates.md', limit: 500 } })
  ).structuredContent as { total: number; backlinks: Array<{ source: string }> };
  const victim = before.backlinks[0].source;
  const fromVictim = before.backlinks.filter((b) => b.source === victim).length;
  if (index) {
    rmSync(path.join(server.vaultDir, victim));
    await index.noteRemoved(vaultId, victim);
  } else await apply([{ op: 'remove', path: victim, prev: (await prevOf(victim))! }]);
  const after = (
    await client.callTool({ name: 'get_backlinks', arguments: { path: 'Getting Started/Dates.md', limit: 500 } })
  ).structuredContent as { total: number };
  t.equal(after.total, before.total - fromVictim);
  // Move the target: links by name still resolve (basename unchanged), and backlinks follow the note.
  if (index) {
    mkdirSync(path.join(server.vaultDir, 'Moved'));
    renameSync(path.join(server.vaultDir, 'Getting Started/Dates.md'), path.join(server.vaultDir, 'Moved/Dates.md'));
    await index.noteMoved(vaultId, 'Getting Started/Dates.md', 'Moved/Dates.md');
  } else {
    const pv = (await prevOf('Getting Started/Dates.md'))!;
    const model = parseNote(readFileSync(path.join(server.vaultDir, 'Getting Started/Dates.md')), {
      path: 'Moved/Dates.md',
    });
    await apply([
      {
        op: 'rename',
        from: 'Getting Started/Dates.md',
        path: 'Moved/Dates.md',
        hash: pv.hash,
        size: pv.size,
        mtimeMs: pv.mtimeMs,
        model,
        prev: pv,
      },
    ]);
  }
  const moved = (await client.callTool({ name: 'get_backlinks', arguments: { path: 'Moved/Dates.md', limit: 500 } }))
    .structuredContent as { total: number };
  t.equal(moved.total, after.total, 'backlinks follow the renamed note');
});
