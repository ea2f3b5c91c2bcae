// The folder argument means one thing in every family (list_notes, find_orphans, list_tasks, list_files,
// get_changes, search_regex, list_bases), and `..` is refused with the same code by each; list cursors are bound to
// the user and vault they were issued to. One server, driven over HTTP with MCP SDK clients.
import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApiKey } from '../../../src/host/auth/api-keys.js';
import { userByName } from '../../../src/host/auth/users.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { refusalOf, textOf } from '../../../src/host/testing/testkit.js';

t.setTimeout(180_000);

const tmp = mkdtempSync(path.join(os.tmpdir(), 'exo-folder-scope-'));
const south = path.join(tmp, 'south');
mkdirSync(south, { recursive: true });
writeFileSync(path.join(south, 'Only South.md'), '# South\n\n- [ ] south task\n');

const server = await startTestServer({
  files: {
    'Root note.md': '# Root\n\n- [ ] root task\n',
    'Projects/Alpha.md': '# Alpha\n\n- [ ] alpha task\n',
    'Projects/sub/Beta.md': '# Beta\n\n- [ ] beta task\n',
    'Projects/data.csv': 'a,b\n',
    'Projectsish/Gamma.md': '# Gamma\n\n- [ ] gamma task\n',
    'Other/Delta.md': '# Delta\n\n- [ ] delta task\n',
    'Top.base': 'views:\n  - {type: table, name: Top}\n',
    'Projects/sub/Board.base': 'views:\n  - {type: table, name: Board}\n',
    'Other/Other.base': 'views:\n  - {type: table, name: Other}\n',
  },
  config: {
    index: { watch: false, reconcileSeconds: 0 },
    vaults: [{ name: 'southvault', path: south }],
    users: [{ name: 'bob', vault: 'southvault' }],
  },
});
t.teardown(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});
const client = await server.connect();
const db = server.host.database.db;
const bobUser = (await userByName(db, 'bob'))!;
const bob = await server.connect({
  key: (await createApiKey(db, { name: 'bob-key', scope: 'readwrite', vaultId: bobUser.vaultId!, userId: bobUser.id }))
    .raw,
  name: 'bob',
});

for (const v of server.host.vaults.all()) {
  const deadline = Date.now() + 60_000;
  while (v.index && !(v.index.status().ready && v.index.status().pending === 0) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
}

// Writes through the tools, so the change feed has events in each folder (a first scan is not itemised).
for (const p of ['Projects/sub/Written.md', 'Projectsish/Written.md', 'Other/Written.md', 'Written at root.md']) {
  const r = await client.callTool({
    name: 'create_note',
    arguments: { path: p, content: '# Written\n\n- [ ] written task\n' },
  });
  if (r.isError) throw new Error(textOf(r));
}

type Args = Record<string, unknown>;
const call = async (name: string, args: Args) => {
  const r = await client.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name}(${JSON.stringify(args)}) was refused: ${textOf(r)}`);
  return r.structuredContent as Record<string, unknown>;
};

/** What each tool lists, as sorted paths, for one folder argument (absent = no folder argument). */
const tools: Record<string, (folder: string | undefined) => Promise<string[]>> = {
  list_notes: async (folder) =>
    (
      (await call('list_notes', { ...(folder === undefined ? {} : { folder }), limit: 100 })).notes as {
        path: string;
      }[]
    ).map((n) => n.path),
  find_orphans: async (folder) =>
    ((await call('find_orphans', folder === undefined ? {} : { folder })).orphans as { path: string }[]).map(
      (n) => n.path,
    ),
  list_tasks: async (folder) =>
    ((await call('list_tasks', folder === undefined ? {} : { folder })).tasks as { path: string }[]).map((n) => n.path),
  list_files: async (folder) =>
    (
      (await call('list_files', { ...(folder === undefined ? {} : { folder }), recursive: true })).entries as {
        path: string;
        kind: string;
      }[]
    )
      .filter((e) => e.kind === 'file')
      .map((e) => e.path),
  get_changes: async (folder) =>
    (
      (await call('get_changes', { since: 'ev:0', limit: 500, ...(folder === undefined ? {} : { folder }) }))
        .events as { path: string; kind: string }[]
    )
      .filter((e) => e.kind !== 'gap' && e.kind !== 'reset')
      .map((e) => e.path),
  list_bases: async (folder) =>
    ((await call('list_bases', folder === undefined ? {} : { folder })).bases as { path: string }[]).map((n) => n.path),
  search_regex: async (folder) =>
    (
      (await call('search_regex', { pattern: 'task', ...(folder === undefined ? {} : { folder }) })).results as {
        path: string;
      }[]
    ).map((n) => n.path),
};
const sorted = (xs: string[]) => [...new Set(xs)].sort();

const WHOLE = [undefined, '', '.', './', '/'];
const PROJECTS = ['Projects', '/Projects/', 'Projects\\', 'Projects/', './Projects', 'Projects//'];
const TRAVERSAL = ['../x', '..', 'Projects/../Other', '..\\x', '.obsidian'];

for (const [tool, list] of Object.entries(tools)) {
  t.test(`${tool}: one meaning of folder`, async (t) => {
    const whole = sorted(await list(undefined));
    t.ok(
      whole.some((p) => p.startsWith('Other/')) && whole.some((p) => !p.includes('/')),
      'no folder covers the whole vault',
    );
    for (const f of WHOLE.slice(1))
      t.same(sorted(await list(f)), whole, `folder ${JSON.stringify(f)} is the whole vault`);
    const projects = sorted(await list('Projects'));
    t.ok(projects.length > 0, 'Projects holds something');
    t.ok(
      projects.every((p) => p.startsWith('Projects/')),
      'only paths under Projects/ (not Projectsish/)',
    );
    t.ok(
      projects.some((p) => p.startsWith('Projects/sub/')),
      'subfolders included',
    );
    for (const f of PROJECTS.slice(1))
      t.same(sorted(await list(f)), projects, `folder ${JSON.stringify(f)} is Projects`);
    for (const f of TRAVERSAL) {
      const r = await client.callTool({
        name: tool,
        arguments:
          tool === 'get_changes'
            ? { since: 'ev:0', folder: f }
            : tool === 'search_regex'
              ? { pattern: 'x', folder: f }
              : { folder: f },
      });
      t.equal(refusalOf(r)?.code, 'invalid_path', `folder ${JSON.stringify(f)} is refused as invalid_path`);
    }
  });
}

t.test('cursors are bound to the user and vault they were issued to', async (t) => {
  for (const tool of ['list_notes', 'list_tasks']) {
    const first = await call(tool, { limit: 1 });
    const cursor = first.next_cursor as string;
    t.type(cursor, 'string', `${tool} pages`);
    const next = await call(tool, { limit: 1, cursor });
    t.ok(next, `${tool} takes its own cursor back`);
    const foreign = refusalOf(await bob.callTool({ name: tool, arguments: { limit: 1, cursor } }));
    t.equal(foreign?.code, 'invalid_arguments', `${tool} refuses a cursor issued to another user and vault`);
    t.match(String(foreign?.problems), /another user, vault or tool/);
    const forged = refusalOf(
      await client.callTool({
        name: tool,
        arguments: { limit: 1, cursor: Buffer.from('["x","y",1]').toString('base64url') },
      }),
    );
    t.equal(forged?.code, 'invalid_arguments', `${tool} refuses a cursor it never issued`);
  }
  const notesCursor = (await call('list_notes', { limit: 1 })).next_cursor as string;
  t.equal(
    refusalOf(await client.callTool({ name: 'list_tasks', arguments: { cursor: notesCursor } }))?.code,
    'invalid_arguments',
    "one tool's cursor is refused by another",
  );
});
