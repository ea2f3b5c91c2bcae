// A first index's batches leave the re-resolution of other notes' links to the pass's end (the graph's sweep),
// and what a batch queued survives a stop: every link ends as the one resolver says over the whole vault, links
// that point forward to notes of later batches included, and same-named notes (ambiguous links) included.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import t from 'tap';
import { nameKeyOfTarget } from '../../../plugins/graph/common.js';
import { Host } from '../../../src/host/host.js';
import { createLogger } from '../../../src/host/log/logger.js';
import { loadSettings } from '../../../src/host/settings/load.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { buildLinkIndex, resolveLink } from '../../../src/markdown/index.js';
import type { IndexService } from '../../../src/sdk/index-service.js';

const COPIES = 3;
const PER_COPY = 25;

/** Each copy's notes link forward (ambiguous across copies), by path within their copy, to the hub, and to nothing. */
function vault(): Record<string, string> {
  const files: Record<string, string> = {};
  for (let c = 0; c < COPIES; c++)
    for (let i = 0; i < PER_COPY; i++)
      files[`c${c}/n${i}.md`] =
        `# n${i}\n\n[[n${(i + 1) % PER_COPY}]] [[c${c}/n${(i + 7) % PER_COPY}]] [[hub]] [[missing]] [[hub-${c}]]\n`;
  for (let c = 0; c < COPIES; c++) files[`zz/hub-${c}.md`] = `# hub ${c}\n`;
  files['zz/hub.md'] = '# hub\n';
  return files;
}

interface Row {
  source: string;
  target: string;
  target_path: string | null;
  ambiguous: boolean;
  candidates: string[];
}

async function linkRows(host: Host): Promise<Row[]> {
  const { rows } = await sql<Row>`
    SELECT s.path AS source, l.target, t.path AS target_path, l.ambiguous, l.candidates
    FROM graph_links l JOIN notes s ON s.id = l.source_id LEFT JOIN notes t ON t.id = l.target_id
    ORDER BY s.path, l.ord`.execute(host.database.db);
  return rows;
}

/** Rows that differ from what the resolver says over every note of the vault. */
function wrong(rows: readonly Row[], paths: readonly string[]): string[] {
  const index = buildLinkIndex(paths);
  return rows.flatMap((r) => {
    const want = resolveLink(r.target, r.source, index);
    const ok =
      r.target_path === want.resolved &&
      r.ambiguous === want.ambiguous &&
      JSON.stringify(r.candidates) === JSON.stringify(want.ambiguous ? want.candidates : []);
    return ok ? [] : [`${r.source} → [[${r.target}]]: ${r.target_path ?? (r.ambiguous ? 'ambiguous' : 'dangling')}`];
  });
}

function indexOf(host: Host): IndexService {
  return host.services.named.get('index') as IndexService;
}

t.test('bulk batches re-resolve at the pass end; a stop leaves the queue to the next start', async (t) => {
  const files = vault();
  const server = await startTestServer({
    files,
    // Batches of 20 notes: each is a bulk batch (the sweep's threshold is 16), and four of them come before the hubs.
    config: { index: { watch: false, reconcileSeconds: 0, batchSize: 20 } },
  });
  let host: Host = server.host;
  t.teardown(async () => {
    await host.close().catch(() => undefined);
    rmSync(server.dir, { recursive: true, force: true });
  });
  await indexOf(host).whenReady(host.vaultHandle.id);
  const paths = Object.keys(files);
  let rows = await linkRows(host);
  t.equal(rows.length, COPIES * PER_COPY * 5, 'every link is stored');
  t.same(wrong(rows, paths), [], 'every link resolved as over the whole vault');
  t.equal(rows.filter((r) => r.ambiguous).length, COPIES * PER_COPY, 'the forward links are ambiguous across copies');
  t.equal(rows.filter((r) => r.target === 'hub' && r.target_path === 'zz/hub.md').length, COPIES * PER_COPY);
  const pending = async () =>
    (await sql<{ n: number }>`SELECT count(*)::int AS n FROM graph_pending`.execute(host.database.db)).rows[0].n;
  t.equal(await pending(), 0, 'nothing is left queued');

  // As if the process had stopped between a bulk batch's commit and its pass's end: the hub links still dangle
  // and their name is queued. The next start sweeps it before it reports ready.
  const vaultId = host.vaultHandle.id;
  await sql`UPDATE graph_links SET target_id = NULL WHERE target = 'hub'`.execute(host.database.db);
  await sql`INSERT INTO graph_pending (vault_id, name_key) VALUES (${vaultId}, ${nameKeyOfTarget('hub')})`.execute(
    host.database.db,
  );
  await host.close();
  host = await Host.start({
    settings: loadSettings({ file: server.configFile, env: {}, cwd: server.dir }),
    log: createLogger('silent'),
  });
  await indexOf(host).whenReady(host.vaultHandle.id);
  rows = await linkRows(host);
  t.same(wrong(rows, paths), [], 'the queued name was re-resolved at the first pass end');
  t.equal(await pending(), 0, 'and dropped from the queue');

  // A copy deleted, then another moved, while the server was down: more removals (then moves) in one batch than
  // the threshold, so most of their names go through the sweep.
  const vaultDir = path.join(server.dir, 'vault');
  const restartAfter = async (change: () => void) => {
    await host.close();
    change();
    host = await Host.start({
      settings: loadSettings({ file: server.configFile, env: {}, cwd: server.dir }),
      log: createLogger('silent'),
    });
    await indexOf(host).whenReady(host.vaultHandle.id);
    return linkRows(host);
  };
  rows = await restartAfter(() => rmSync(path.join(vaultDir, 'c1'), { recursive: true }));
  const left = paths.filter((p) => !p.startsWith('c1/'));
  t.equal(rows.length, (COPIES - 1) * PER_COPY * 5, "the deleted copy's links are gone");
  t.same(wrong(rows, left), [], 'every link resolved as over the vault after the delete');
  // One batch holds the whole move (a hash vanishing and appearing in one batch is a rename): 25 renames.
  rows = await restartAfter(() => {
    mkdirSync(path.join(vaultDir, 'moved'));
    renameSync(path.join(vaultDir, 'c2'), path.join(vaultDir, 'moved/c2'));
    const config = readFileSync(server.configFile, 'utf8');
    writeFileSync(server.configFile, config.replace('batchSize: 20', 'batchSize: 100'));
  });
  const renamed = (
    await sql<{ n: number }>`SELECT count(*)::int AS n FROM change_events WHERE kind = 'moved'`.execute(
      host.database.db,
    )
  ).rows[0].n;
  t.equal(renamed, PER_COPY, 'the move was indexed as renames');
  t.same(
    wrong(
      rows,
      left.map((p) => (p.startsWith('c2/') ? `moved/${p}` : p)),
    ),
    [],
    'and after the move',
  );
  t.equal(await pending(), 0, 'nothing is left queued');
});
