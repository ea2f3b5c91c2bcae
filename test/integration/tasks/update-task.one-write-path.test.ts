// update_task writes through the notes family's note-writer: with notes.write.preconditionRequired it is
// refused exactly like edit_note, a malformed hash gets the same code, and a path without .md is a note.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { refusalOf, textOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const server = await startTestServer({
  builtinDir: null,
  config: {
    plugins: [path.join(root, 'plugins/notes'), path.join(root, 'plugins/tasks')],
    notes: { write: { preconditionRequired: true } },
  },
  files: { 'todo.md': '# Todo\n- [ ] ship it\n' },
});
t.teardown(() => server.close());
await (server.host.services.named.get('index') as IndexService).whenReady(server.host.vaultHandle.id);
const client = await server.connect();

t.test('no expected_hash: update_task is refused like edit_note, with the same code and hash', async (t) => {
  const edit = refusalOf(
    await client.callTool({ name: 'edit_note', arguments: { path: 'todo.md', content: 'x\n', append: true } }),
  );
  const task = refusalOf(
    await client.callTool({ name: 'update_task', arguments: { path: 'todo.md', line: 2, done: true } }),
  );
  t.equal(edit?.code, 'precondition_required');
  t.equal(task?.code, edit?.code);
  t.equal(task?.currentHash, edit?.currentHash);
  t.equal(readFileSync(path.join(server.vaultDir, 'todo.md'), 'utf8'), '# Todo\n- [ ] ship it\n', 'nothing written');
});

t.test('a malformed expected_hash gets the same refusal code from both tools', async (t) => {
  const edit = refusalOf(
    await client.callTool({
      name: 'edit_note',
      arguments: { path: 'todo.md', content: 'x\n', append: true, expected_hash: 'sha256:nope' },
    }),
  );
  const task = refusalOf(
    await client.callTool({
      name: 'update_task',
      arguments: { path: 'todo.md', line: 2, done: true, expected_hash: 'sha256:nope' },
    }),
  );
  t.equal(edit?.code, 'malformed_precondition');
  t.equal(task?.code, 'malformed_precondition');
});

t.test('a path without .md is the note, as for the notes tools; the hash binds the write', async (t) => {
  const read = await client.callTool({ name: 'read_note', arguments: { path: 'todo' } });
  const hash = (read.structuredContent as { content_hash: string }).content_hash;
  const done = await client.callTool({
    name: 'update_task',
    arguments: { path: 'todo', line: 2, done: true, expected_hash: hash },
  });
  t.notOk(done.isError, textOf(done));
  t.equal((done.structuredContent as { path: string }).path, 'todo.md');
  t.match(readFileSync(path.join(server.vaultDir, 'todo.md'), 'utf8'), /- \[x\] ship it ✅ \d{4}-\d{2}-\d{2}/);
  const stale = refusalOf(
    await client.callTool({
      name: 'update_task',
      arguments: { path: 'todo', line: 2, done: false, expected_hash: hash },
    }),
  );
  t.equal(stale?.code, 'stale_precondition');
});
