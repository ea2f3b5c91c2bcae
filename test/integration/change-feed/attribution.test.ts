// End to end: a note written through the notes family's tools reaches the change feed attributed to
// the calling credential (the origin travels with the index write-through); outside edits do not.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { textOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const server = await startTestServer({
  builtinDir: null,
  config: { plugins: [path.join(root, 'plugins/notes'), path.join(root, 'plugins/change-feed')] },
});
t.teardown(() => server.close());
const index = server.host.services.named.get('index') as IndexService;
await index.whenReady(server.host.vaultHandle.id);
const client = await server.connect();

t.test('create_note, edit_note and move_note are attributed to the key; an outside edit is not', async (t) => {
  const created = await client.callTool({
    name: 'create_note',
    arguments: { path: 'agent/plan.md', content: '# Plan\n' },
  });
  t.notOk(created.isError, textOf(created));
  await client.callTool({ name: 'move_note', arguments: { from_path: 'agent/plan.md', to_path: 'agent/plan-2.md' } });
  writeFileSync(path.join(server.vaultDir, 'human.md'), 'typed in Obsidian\n');
  await index.noteWritten(server.host.vaultHandle.id, 'human.md');
  const mine = (await client.callTool({ name: 'get_changes', arguments: { since: 'ev:0', by: 'me' } }))
    .structuredContent as { events: Array<{ path: string; kind: string }> };
  t.same(
    mine.events.map((e) => `${e.kind} ${e.path}`),
    ['created agent/plan.md', 'moved agent/plan-2.md'],
  );
  const human = (await client.callTool({ name: 'get_changes', arguments: { since: 'ev:0', by: 'human' } }))
    .structuredContent as { events: Array<{ path: string }> };
  t.ok(human.events.some((e) => e.path === 'human.md'));
  t.notOk(human.events.some((e) => e.path.startsWith('agent/')));
});

t.test('a client subscribed to vault://changes is told when a note changes', async (t) => {
  const { ResourceUpdatedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
  const watcher = await server.connect({ key: server.readKey });
  const updates: string[] = [];
  watcher.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => {
    updates.push(n.params.uri);
  });
  t.ok(watcher.getServerCapabilities()?.resources?.subscribe, 'the server offers subscriptions');
  await watcher.subscribeResource({ uri: 'vault://changes' });
  await t.rejects(watcher.subscribeResource({ uri: 'vault://nothing' }), /No resource matches/);
  await client.callTool({ name: 'create_note', arguments: { path: 'agent/ping.md', content: 'ping\n' } });
  const end = Date.now() + 3000;
  while (updates.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
  t.same(updates.slice(0, 1), ['vault://changes']);
  const text = ((await watcher.readResource({ uri: 'vault://changes' })).contents[0] as { text: string }).text;
  t.match(text, /agent\/ping\.md/);
  await watcher.unsubscribeResource({ uri: 'vault://changes' });
  const before = updates.length;
  await client.callTool({ name: 'create_note', arguments: { path: 'agent/pong.md', content: 'pong\n' } });
  await new Promise((r) => setTimeout(r, 400));
  t.equal(updates.length, before, 'no notice after unsubscribe');
});

t.test('a vault://changes notification follows the commit: get_changes run on it sees the event', async (t) => {
  const { ResourceUpdatedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
  const watcher = await server.connect({ key: server.readKey });
  const start = (
    (await watcher.callTool({ name: 'get_changes', arguments: { since: 'ev:0', limit: 500 } })).structuredContent as {
      next_since: string;
    }
  ).next_since;
  let cursor = start;
  const seen: string[] = [];
  let reading = Promise.resolve();
  // Each notification reads on from the cursor at once, as a listener does; nothing else reads.
  watcher.setNotificationHandler(ResourceUpdatedNotificationSchema, async () => {
    reading = reading.then(async () => {
      const out = (await watcher.callTool({ name: 'get_changes', arguments: { since: cursor } })).structuredContent as {
        events: Array<{ path: string }>;
        next_since: string;
      };
      seen.push(...out.events.map((e) => e.path));
      cursor = out.next_since;
    });
  });
  await watcher.subscribeResource({ uri: 'vault://changes' });
  const paths = Array.from({ length: 5 }, (_, i) => `agent/commit-${i}.md`);
  for (const p of paths) await client.callTool({ name: 'create_note', arguments: { path: p, content: `${p}\n` } });
  const end = Date.now() + 5000;
  while (!paths.every((p) => seen.includes(p)) && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
  await reading;
  t.same(
    paths.filter((p) => !seen.includes(p)),
    [],
    'every created note was read by a get_changes that a notification started',
  );
  await watcher.unsubscribeResource({ uri: 'vault://changes' });
});
