// vault.readOnly: every family's write tools are hidden and refused (not only the notes family's), and the
// vault itself refuses changes from any path, while reads, searches and task listings keep working.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { refusalOf, textOf } from '../../../src/host/testing/testkit.js';

const server = await startTestServer({
  config: { vault: { readOnly: true } },
  files: { 'Tasks.md': '# Tasks\n\n- [ ] write the report\n' },
});
t.teardown(() => server.close());
const client = await server.connect();

t.test('no write tool of any family is listed; reads are', async (t) => {
  const names = (await client.listTools()).tools.map((x) => x.name);
  for (const w of ['create_note', 'edit_note', 'update_task', 'write_file', 'move_file', 'request_upload'])
    t.notOk(names.includes(w), `${w} hidden`);
  for (const r of ['read_note', 'list_tasks', 'keyword_search', 'read_file', 'request_download'])
    t.ok(names.includes(r), `${r} listed`);
});

t.test('a write tool called anyway is refused and the note is untouched', async (t) => {
  const r = await client.callTool({ name: 'update_task', arguments: { path: 'Tasks.md', line: 3, status: 'x' } });
  t.equal(refusalOf(r)?.code, 'vault_read_only', textOf(r));
  t.equal(readFileSync(path.join(server.vaultDir, 'Tasks.md'), 'utf8'), '# Tasks\n\n- [ ] write the report\n');
  t.match(textOf(await client.callTool({ name: 'read_note', arguments: { path: 'Tasks.md' } })), /write the report/);
});

t.test('the vault refuses changes from any code path, not only tool dispatch', async (t) => {
  await t.rejects(server.host.vaultHandle.fs.create('x.md', Buffer.from('x')), { code: 'vault_read_only' });
  await t.rejects(server.host.vaultHandle.fs.mkdirp('folder'), { code: 'vault_read_only' });
  t.equal(await server.host.vaultHandle.fs.exists('Tasks.md'), true, 'reads pass through');
});

t.test(
  'a family read-only hides only its write tools: get_periodic_note stays, and refuses only create_if_missing',
  async (t) => {
    const s = await startTestServer({ config: { families: { notes: { readOnly: true } } } });
    t.teardown(() => s.close());
    const c = await s.connect();
    const names = (await c.listTools()).tools.map((x) => x.name);
    t.ok(names.includes('get_periodic_note'), 'listed: it reads unless asked to create');
    t.notOk(names.includes('create_note'), "the family's write tools are hidden");
    const read = await c.callTool({ name: 'get_periodic_note', arguments: { granularity: 'daily' } });
    t.notOk(read.isError, textOf(read));
    const create = await c.callTool({
      name: 'get_periodic_note',
      arguments: { granularity: 'daily', create_if_missing: true },
    });
    t.equal(refusalOf(create)?.code, 'read_only', textOf(create));
    const reader = await s.connect({ key: s.readKey });
    t.ok(
      (await reader.listTools()).tools.some((x) => x.name === 'get_periodic_note'),
      'listed for a read-only key too',
    );
  },
);
