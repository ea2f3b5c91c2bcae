// The separately packaged example family (examples/bookmarks) as a user gets it: built with its own
// tsconfig, installed beside a config file the way npm lays out its packed tarball, loaded by package name
// through `plugins:`. Its own refusal codes and service reach clients and other families; then its own
// test (the test kit, imported from `exocortex/testkit`) runs from that install as its author runs it.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { refusalOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';

t.setTimeout(180_000);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const EXAMPLE = path.join(ROOT, 'examples/bookmarks');
const NAME = 'exocortex-example-bookmarks';

if (!existsSync(path.join(ROOT, 'dist/src/sdk/index.d.ts')))
  throw new Error('the example compiles against the build of exocortex/sdk: run npm run build (npm ci does)');
const built = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', EXAMPLE], {
  encoding: 'utf8',
  timeout: 120_000,
});
t.equal(built.status, 0, `the example builds with its own tsconfig ${built.stdout}${built.stderr}`);

const server = await startTestServer({
  builtinDir: null,
  packages: { [NAME]: EXAMPLE },
  config: { plugins: [NAME], bookmarks: { max: 3 } },
});
t.teardown(() => server.close());

t.test('loaded by package name: its tools, its own refusal codes on the wire, its service and health', async (t) => {
  t.equal(server.host.manager.registry.status.get('bookmarks')?.state, 'serving');
  const client = await server.connect();
  const tools = (await client.listTools()).tools.map((x) => x.name).sort();
  t.same(tools, ['add_bookmark', 'list_bookmarks']);
  const add = (url: string) => client.callTool({ name: 'add_bookmark', arguments: { url, title: 'A page' } });
  t.notOk(refusalOf(await add('https://example.org/one')));
  const dup = (await add('https://example.org/one')) as { content: Array<{ text: string }> };
  t.match(
    dup.content[0].text,
    /is already kept as bookmark \d+; nothing was added\.\nMCP-REFUSAL \{"code":"bookmark_exists","retryable":false,"url":"https:\/\/example\.org\/one","id":\d+\}$/,
    'its sentence, then the contract line with its details',
  );
  const store = server.host.manager.registry.providedService('bookmark-store') as { count(v: number): Promise<number> };
  t.equal(await store.count(server.host.vaultHandle.id), 1, 'its service answers for other families');
  const health = (await (
    await fetch(`${server.url}/health`, { headers: { authorization: `Bearer ${server.key}` } })
  ).json()) as {
    families?: Record<string, unknown>;
    familyCounts?: Record<string, unknown>;
  };
  t.match(JSON.stringify(health), /"bookmarks"/, '/health lists the family');
  t.match(
    JSON.stringify(health),
    /"bookmarks":1\b/,
    'its health count comes through its own typed service ref (BOOKMARK_STORE)',
  );
});

t.test(
  "its own test passes from the installed package, importing exocortex/testkit as its author's would",
  async (t) => {
    const consumer = mkdtempSync(path.join(os.tmpdir(), 'exo-example-consumer-'));
    t.teardown(() => rmSync(consumer, { recursive: true, force: true }));
    const modules = path.join(consumer, 'node_modules');
    mkdirSync(modules);
    for (const dep of ['exocortex', 'tap', 'tsx'])
      symlinkSync(dep === 'exocortex' ? ROOT : path.join(ROOT, 'node_modules', dep), path.join(modules, dep), 'dir');
    const copy = path.join(consumer, 'bookmarks');
    mkdirSync(copy);
    for (const part of ['package.json', 'dist', 'schemas', 'test'])
      cpSync(path.join(EXAMPLE, part), path.join(copy, part), { recursive: true });
    const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(copy, 'test/bookmarks.test.ts')], {
      cwd: copy,
      encoding: 'utf8',
      timeout: 120_000,
    });
    t.equal(
      run.status,
      0,
      run.status === 0
        ? "the example's test passes"
        : `the example's test failed:\n${run.stdout.slice(-2000)}${run.stderr.slice(-2000)}`,
    );
    t.match(run.stdout, /# \{ total: \d+, pass: \d+ \}|^ok/m);
  },
);
