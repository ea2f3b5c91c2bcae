// The three .base files of the obsidian-tasks-demo corpus ("Find properties not read by Obsidian 1.9.x")
// answered through an MCP client with the bases family alone (no graph family): rows and formula cells checked
// against an independent YAML reading of every note's frontmatter; a base reading links is refused by name.
import t from 'tap';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { corpus as corpusPath, notesOnDisk } from '../../fixtures/corpus.js';
import { refusalOf as refusalOfResult, textOf as textOfResult } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import { applyOps, type Op } from '../../../src/host/index/store.js';
import { parseNote } from '../../../src/markdown/index.js';

const textOf = (r: unknown): string => textOfResult(r as { content?: unknown });
const refusalOf = (r: unknown) => refusalOfResult(r as { isError?: boolean; content?: unknown });

// A first index of the corpus copy on a busy machine can take a while.
t.setTimeout(300_000);
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const corpus = corpusPath('obsidian-tasks-demo');
const FOLDER = 'How To/Find properties not read by Obsidian 1.9.x';
const server = await startTestServer({
  builtinDir: null,
  copyVaultFrom: corpus,
  config: { plugins: [path.join(root, 'plugins/bases')], index: { watch: false, reconcileSeconds: 0 } },
});
t.teardown(() => server.close());
const client = await server.connect();
const db = server.host.database.db;
const vaultId = server.host.vaultHandle.id;
const index = server.host.services.named.get('index') as IndexService | undefined;
const notes = notesOnDisk(server.vaultDir);
if (index) await index.whenReady(vaultId, 120_000);
else {
  const contributors = server.host.manager.registry.contributors() as never;
  const ops = (list: string[]): Op[] =>
    list.map((p) => {
      const bytes = readFileSync(path.join(server.vaultDir, p));
      return {
        op: 'upsert',
        path: p,
        hash: `sha256:${createHash('sha256').update(bytes).digest('hex')}`,
        size: bytes.length,
        mtimeMs: Date.now(),
        model: parseNote(bytes, { path: p }),
      };
    });
  for (let i = 0; i < notes.length; i += 40)
    await db
      .transaction()
      .execute((trx) => applyOps(trx, vaultId, ops(notes.slice(i, i + 40)), contributors, new Date()));
}

/** Each note's frontmatter, read independently of the server's parser. */
function frontmatter(p: string): Record<string, unknown> | null {
  const text = readFileSync(path.join(server.vaultDir, p), 'utf8');
  const m = /^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)/.exec(text);
  if (!m) return null;
  try {
    const v = parseYaml(m[1]);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}
const empty = (v: unknown) =>
  v === undefined ||
  v === null ||
  v === '' ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0);

type Cell = { type: string; value: unknown };

for (const [file, prop, formula] of [
  ['Check Tags.base', 'tags', 'ErrorsAreTagsValuesNeedingFixing'],
  ['Check Aliases.base', 'aliases', 'ErrorsAreAliasesValuesNeedingFixing'],
  ['Check CssClasses.base', 'cssclasses', 'ErrorsAreCssclassesValuesNeedingFixing'],
] as const) {
  t.test(`${file}: the notes with a non-empty ${prop} property, by path`, async (t) => {
    const expected = notes.filter((p) => !empty(frontmatter(p)?.[prop])).sort();
    const r = await client.callTool({ name: 'query_base', arguments: { path: `${FOLDER}/${file}`, limit: 500 } });
    t.notOk(r.isError, textOf(r));
    const o = r.structuredContent as {
      columns: { id: string }[];
      rows: { path: string; values: Record<string, Cell> }[];
      total: number;
    };
    t.same(
      o.columns.map((c) => c.id),
      ['file.name', `formula.${formula}`, prop, 'file.path'],
    );
    t.same(
      o.rows.map((x) => x.path),
      expected,
      'rows in file.path order',
    );
    t.ok(expected.length > 0, `${expected.length} notes`);
    for (const row of o.rows) {
      const raw = frontmatter(row.path)![prop];
      const cell = row.values[`formula.${formula}`];
      if (Array.isArray(raw))
        t.same(
          cell,
          { type: 'string', value: raw.map((x) => (x === null ? '' : String(x))).join('; ') },
          `${row.path}: join`,
        );
      else
        t.equal(
          cell.type,
          'error',
          `${row.path}: a ${typeof raw} ${prop} has no join() — shown as an error, as in Obsidian`,
        );
    }
  });
}

t.test('without the graph family, a base that reads links is refused by name', async (t) => {
  const r = await client.callTool({
    name: 'query_base',
    arguments: { yaml: 'filters: file.backlinks.length > 0\nviews: [{type: table, name: T}]' },
  });
  t.equal(refusalOf(r)?.code, 'service_unavailable');
  t.match(textOf(r), /graph family is not enabled/);
  const ok = await client.callTool({
    name: 'query_base',
    arguments: { yaml: 'filters: file.hasTag("task")\nviews: [{type: table, name: T}]' },
  });
  t.notOk(ok.isError, 'bases that read no links need no graph family');
});
