// End to end through MCP clients: three credentials edit one note, then list, diff, restore and undo one
// client's changes with a human edit interleaved (conflict reported, the human's edit kept), delete and
// restore after .trash is emptied, a restart in between (history survives), and prune by retention (a server's of
// the vaults it serves only).
import t from 'tap';
import { rmSync, writeFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { refusalOf, textOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { createApiKey } from '../../../src/host/auth/api-keys.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import { ensureVault } from '../../../src/host/auth/vaults.js';
import { historySettings, type HistoryRecorder } from '../../../plugins/history/recorder.js';
import type { WriteEvent } from '../../../src/sdk/index.js';
import { prune } from '../../../plugins/history/store.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const families = ['notes', 'files', 'transfer', 'change-feed', 'history'].map((f) => path.join(root, 'plugins', f));
const server = await startTestServer({
  builtinDir: null,
  config: {
    plugins: families,
    history: { maxVersionBytes: 2048 },
    transfer: { publicUrl: 'https://vault.example.test' },
  },
  files: { 'plan.md': '# Plan\n\nwritten by a human\n' },
});
t.teardown(() => server.close());
const vaultId = server.host.vaultHandle.id;
await (server.host.services.named.get('index') as IndexService).whenReady(vaultId);
const keys = {
  alice: (await createApiKey(server.host.database.db, { name: 'alice', scope: 'readwrite', vaultId })).raw,
  bob: (await createApiKey(server.host.database.db, { name: 'bob', scope: 'readwrite', vaultId })).raw,
  carol: (await createApiKey(server.host.database.db, { name: 'carol', scope: 'readwrite', vaultId })).raw,
};
const clientNames = { alice: 'claude-desktop', bob: 'cursor', carol: 'n8n' };
type Who = keyof typeof keys;
let clients: Record<Who, Client>;
const connectAll = async () => {
  clients = {
    alice: await server.connect({ key: keys.alice, name: clientNames.alice }),
    bob: await server.connect({ key: keys.bob, name: clientNames.bob }),
    carol: await server.connect({ key: keys.carol, name: clientNames.carol }),
  };
};
await connectAll();

async function call(who: Who, name: string, args: Record<string, unknown>): Promise<any> {
  const r = await clients[who].callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name} refused: ${textOf(r)}`);
  return r.structuredContent;
}
async function refused(who: Who, name: string, args: Record<string, unknown>) {
  const r = await clients[who].callTool({ name, arguments: args });
  return refusalOf(r);
}
const vaultFile = (p: string) => path.join(server.vaultDir, p);
const append = (who: Who, line: string) => call(who, 'edit_note', { path: 'plan', content: `${line}\n`, append: true });

t.test('three clients edit; list_revisions names each, newest first, and keeps the human version', async (t) => {
  await append('alice', '- alice 1');
  await append('bob', '- bob 1');
  await append('carol', '- carol 1');
  const list = await call('alice', 'list_revisions', { path: 'plan' });
  t.equal(list.path, 'plan.md');
  t.same(
    list.revisions.map((r: any) => `${r.kind}:${r.by_name ?? r.by}`),
    ['write:carol', 'write:bob', 'write:alice', 'outside:human/sync'],
  );
  t.same(
    list.revisions.slice(0, 3).map((r: any) => r.client),
    ['n8n', 'cursor', 'claude-desktop'],
  );
  t.same(
    list.revisions.slice(0, 3).map((r: any) => r.tool),
    ['edit_note', 'edit_note', 'edit_note'],
  );
  t.equal(list.revisions[2].you, true, 'alice sees her own revision marked');
  t.match(list.revisions[0].event, /^ev:\d+$/, 'linked to its change-feed event');
  t.equal(list.current_hash, list.revisions[0].content_hash);
  const page = await call('alice', 'list_revisions', { path: 'plan', limit: 2 });
  t.equal(page.revisions.length, 2);
  const rest = await call('alice', 'list_revisions', { path: 'plan', limit: 2, cursor: page.next_cursor });
  t.same(
    rest.revisions.map((r: any) => r.kind),
    ['write', 'outside'],
  );
});

t.test('read and diff revisions; bad revision ids are not found', async (t) => {
  const list = await call('bob', 'list_revisions', { path: 'plan.md' });
  const human = list.revisions[3].revision;
  const read = await call('bob', 'read_revision', { path: 'plan', revision: human });
  t.equal(read.content, '# Plan\n\nwritten by a human\n');
  const diff = await call('bob', 'diff_revisions', { path: 'plan', from: human });
  t.match(diff.diff, /\+- alice 1/);
  t.match(diff.diff, /\+- carol 1/);
  t.equal(diff.to, 'current');
  t.equal((await refused('bob', 'read_revision', { path: 'plan', revision: 'rev-999999' }))?.code, 'unknown_revision');
  t.equal(
    (await refused('bob', 'read_revision', { path: 'other', revision: human }))?.code,
    'unknown_revision',
    'a revision of another note',
  );
});

t.test('restore_revision: dry run, stale hash refused, then restored (itself a revision)', async (t) => {
  const list = await call('carol', 'list_revisions', { path: 'plan' });
  const aliceRev = list.revisions[2];
  const dry = await call('carol', 'restore_revision', { path: 'plan', revision: aliceRev.revision, dry_run: true });
  t.equal(dry.dry_run, true);
  t.match(dry.diff, /-- carol 1/);
  const stale = await refused('carol', 'restore_revision', {
    path: 'plan',
    revision: aliceRev.revision,
    expected_hash: aliceRev.content_hash,
  });
  t.equal(stale?.code, 'stale_precondition');
  const done = await call('carol', 'restore_revision', {
    path: 'plan',
    revision: aliceRev.revision,
    expected_hash: list.current_hash,
  });
  t.equal(done.content_hash, aliceRev.content_hash);
  t.notMatch(readFileSync(vaultFile('plan.md'), 'utf8'), /bob 1/);
  const after = await call('carol', 'list_revisions', { path: 'plan', limit: 1 });
  t.equal(after.revisions[0].tool, 'restore_revision');
});

t.test('the history survives a restart', async (t) => {
  const before = (await call('alice', 'list_revisions', { path: 'plan' })).revisions.length;
  await server.restart();
  await (server.host.services.named.get('index') as IndexService).whenReady(vaultId);
  await connectAll();
  const after = await call('alice', 'list_revisions', { path: 'plan' });
  t.equal(after.revisions.length, before);
});

t.test('undo one client: a human edit interleaved is a conflict and kept; the other note is reverted', async (t) => {
  await call('bob', 'create_note', { path: 'bob-notes', content: 'bob was here\n' });
  await call('bob', 'edit_note', { path: 'side', content: 'side v1\n' }).catch(() => undefined);
  writeFileSync(vaultFile('side.md'), 'side by a human\n');
  await (server.host.services.named.get('index') as IndexService).noteWritten(vaultId, 'side.md');
  await call('bob', 'edit_note', { path: 'side', content: 'side by bob\n' });
  await append('bob', '- bob 2');
  writeFileSync(vaultFile('plan.md'), `${readFileSync(vaultFile('plan.md'), 'utf8')}- human typed this\n`);
  const plan = await call('alice', 'undo_changes', { credential: 'bob' });
  t.equal(plan.dry_run, true);
  const conflict = plan.conflicts.find((c: any) => c.path === 'plan.md');
  t.ok(conflict, 'plan.md is a conflict');
  t.match(conflict.agent_diff, /\+- bob 2/);
  t.match(conflict.other_diff, /\+- human typed this/);
  t.same(plan.reverted.map((r: any) => `${r.action} ${r.path}`).sort(), ['deleted bob-notes.md', 'restored side.md']);
  const applied = await call('alice', 'undo_changes', { credential: 'bob', dry_run: false });
  t.equal(applied.reverted.length, 2);
  t.match(readFileSync(vaultFile('plan.md'), 'utf8'), /human typed this/, 'the human edit is kept');
  t.equal(
    readFileSync(vaultFile('side.md'), 'utf8'),
    'side by a human\n',
    "bob's edit is undone back to the human version",
  );
  t.equal((await refused('alice', 'undo_changes', { credential: 'bob', client: 'cursor' }))?.code, 'invalid_arguments');
});

t.test('undo a move: the note goes back to its old path with its content as before the selection', async (t) => {
  await call('carol', 'create_note', { path: 'trip', content: 'trip v1\n' });
  const since = new Date().toISOString();
  await call('carol', 'edit_note', { path: 'trip', content: 'trip v2\n' });
  await call('carol', 'move_note', { from_path: 'trip', to_path: 'archive/trip' });
  await call('carol', 'edit_note', { path: 'archive/trip', content: 'trip v3\n' });
  const plan = await call('carol', 'undo_changes', { credential: 'carol', since });
  t.same(
    plan.conflicts,
    [],
    'the old path is not a conflict in the dry run (the planned move puts the note back first)',
  );
  t.same(
    plan.reverted.map((r: any) => `${r.action} ${r.path}${r.to_path ? ` → ${r.to_path}` : ''}`),
    ['moved back archive/trip.md → trip.md', 'restored trip.md'],
  );
  const applied = await call('carol', 'undo_changes', { credential: 'carol', since, dry_run: false });
  t.same(applied.conflicts, []);
  t.equal(applied.reverted.length, 2);
  t.equal(
    readFileSync(vaultFile('trip.md'), 'utf8'),
    'trip v1\n',
    'back at its old path with the content it had before the selection',
  );
  t.throws(() => readFileSync(vaultFile('archive/trip.md')), 'nothing left at the new path');
});

t.test('delete, empty the trash, list deleted notes, restore; an occupied path is refused', async (t) => {
  await call('carol', 'create_note', { path: 'gone', content: 'soon gone\n' });
  await call('carol', 'delete_note', { path: 'gone' });
  rmSync(path.join(server.vaultDir, '.trash'), { recursive: true, force: true });
  const deleted = await call('carol', 'list_deleted_notes', {});
  const entry = deleted.notes.find((n: any) => n.path === 'gone.md');
  t.ok(entry, 'listed after .trash was emptied');
  const back = await call('carol', 'restore_revision', { path: 'gone', revision: entry.revision });
  t.equal(back.created, true);
  t.equal(readFileSync(vaultFile('gone.md'), 'utf8'), 'soon gone\n');
  await call('carol', 'delete_note', { path: 'gone' });
  writeFileSync(vaultFile('gone.md'), 'a different note now\n');
  const again = (await call('carol', 'list_revisions', { path: 'gone' })).revisions.find(
    (r: any) => r.kind === 'delete',
  );
  t.equal(
    (await refused('carol', 'restore_revision', { path: 'gone', revision: again.revision }))?.code,
    'already_exists',
  );
});

t.test('a binary file overwritten through write_file: its version is kept, summarised and not diffed', async (t) => {
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]);
  await call('alice', 'write_file', { path: 'img.png', content: png.toString('base64'), encoding: 'base64' });
  await call('alice', 'write_file', {
    path: 'img.png',
    content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 9]).toString('base64'),
    encoding: 'base64',
    overwrite: true,
  });
  const list = await call('alice', 'list_revisions', { path: 'img.png' });
  t.same(
    list.revisions.map((r: any) => r.kind),
    ['write', 'create'],
    'the create and the replace through write_file are both revisions',
  );
  const diff = await call('alice', 'diff_revisions', { path: 'img.png', from: list.revisions[1].revision });
  t.equal(diff.binary, true);
  t.match(diff.diff, /Binary content is not diffed: 8 bytes/);
  const read = await call('alice', 'read_revision', { path: 'img.png', revision: list.revisions[1].revision });
  t.equal(read.content, null);
  t.equal(
    (await refused('alice', 'restore_revision', { path: 'img.png', revision: list.revisions[1].revision }))?.code,
    'not_a_note',
  );
});

t.test('an upload through a transfer link is a revision of the credential that minted it', async (t) => {
  await call('bob', 'write_file', { path: 'data.csv', content: 'a,b\n1,2\n', encoding: 'text' });
  const link = await call('bob', 'request_upload', { path: 'data.csv', overwrite: true });
  const token = String(link.url).slice(String(link.url).indexOf('#') + 1);
  const put = await fetch(new URL('/transfer/upload', server.url), {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
    body: 'a,b\n3,4\n',
  });
  t.equal(put.status, 201, await put.text());
  const list = await call('bob', 'list_revisions', { path: 'data.csv' });
  t.same(
    list.revisions.map((r: any) => `${r.kind}:${r.tool}`),
    ['write:request_upload', 'create:write_file'],
  );
  t.equal(list.revisions[0].you, true, 'attributed to bob, who minted the link');
  const old = await call('bob', 'read_revision', { path: 'data.csv', revision: list.revisions[1].revision });
  t.equal(old.content, 'a,b\n1,2\n', 'the uploaded-over version is kept');
  const big = await call('bob', 'write_file', {
    path: 'big.bin',
    content: Buffer.alloc(4096, 7).toString('base64'),
    overwrite: true,
  });
  t.equal(big.created, true);
  await call('bob', 'write_file', {
    path: 'big.bin',
    content: Buffer.alloc(10, 1).toString('base64'),
    overwrite: true,
  });
  const bigList = await call('bob', 'list_revisions', { path: 'big.bin' });
  t.same(
    bigList.revisions.map((r: any) => r.kind),
    ['write', 'outside', 'create'],
  );
  t.match(
    bigList.revisions[1].skipped,
    /maxVersionBytes.*replaced without being kept/,
    'an incumbent over the limit is not read, and says so',
  );
});

t.test('a note over history.maxVersionBytes is recorded as skipped, visibly', async (t) => {
  await call('alice', 'create_note', { path: 'big', content: `${'x'.repeat(3000)}\n` });
  await call('alice', 'edit_note', { path: 'big', content: 'small now\n' });
  const list = await call('alice', 'list_revisions', { path: 'big' });
  t.same(
    list.revisions.map((r: any) => `${r.kind}:${r.skipped ? 'skipped' : 'kept'}`),
    ['write:kept', 'create:skipped'],
  );
  t.match(list.revisions[1].skipped, /history\.maxVersionBytes/);
  const read = await call('alice', 'read_revision', { path: 'big', revision: list.revisions[1].revision });
  t.match(read.summary, /not kept/);
});

t.test('read-only credentials do not see the write tools', async (t) => {
  const reader = await server.connect({ key: server.readKey });
  const names = (await reader.listTools()).tools.map((x) => x.name);
  t.ok(names.includes('list_revisions') && names.includes('diff_revisions'));
  t.notOk(names.includes('restore_revision') || names.includes('undo_changes'));
});

t.test('/health shows the store; prune by retention drops old revisions', async (t) => {
  const health = (await server.host.health()) as any;
  t.equal(health.families.history, 'serving');
  t.ok(health.familyHealth.history.store_bytes > 0, 'the store size is on /health');
  t.equal(health.familyHealth.history.recording, true);
  const db = server.host.database.db;
  await sql`UPDATE history_revisions SET at = now() - interval '400 days' WHERE path = 'bob-notes.md'`.execute(db);
  const recorder = server.host.manager.registry.providedService('history') as {
    prune(): Promise<{ revisions: number; versions: number }>;
  };
  const r = await recorder.prune();
  t.ok(r.revisions >= 1, 'old revisions pruned');
  t.same((await call('alice', 'list_revisions', { path: 'bob-notes' })).revisions, []);
});

t.test("a server prunes only the vaults it serves: another process's vault is left to its owner", async (t) => {
  const db = server.host.database.db;
  const elsewhere = await ensureVault(db, 'elsewhere', path.join(server.dir, 'not-held-here'));
  const old = () =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM history_revisions WHERE vault_id = ${elsewhere}`
      .execute(db)
      .then((r) => r.rows[0].n);
  await sql`INSERT INTO history_revisions (vault_id, path, at, kind, target, hash, previous_hash, from_path, size, skipped,
      actor_kind, actor_id, actor_name, user_name, client_name, client_id, tool)
    SELECT ${elsewhere}, path, now() - interval '400 days', kind, target, hash, previous_hash, from_path, size, skipped,
      actor_kind, actor_id, actor_name, user_name, client_name, client_id, tool
    FROM history_revisions WHERE vault_id = ${vaultId} ORDER BY id LIMIT 1`.execute(db);
  t.equal(await old(), 1);
  const recorder = server.host.manager.registry.providedService('history') as {
    prune(): Promise<{ revisions: number; versions: number }>;
  };
  await recorder.prune();
  t.equal(await old(), 1, "the server's prune leaves a revision of a vault it does not serve");
  const s = historySettings({ history: {} });
  await prune(db, s.retentionDays, s.maxStoreBytes);
  t.equal(await old(), 0, "the operator's prune (every vault) drops it");
});

t.test("a prune between a write's before and after keeps the version the write replaces", async (t) => {
  const db = server.host.database.db;
  const fs = server.host.vaultHandle.fs;
  await call('alice', 'create_note', { path: 'quiet', content: '# Quiet\n\nuntouched for a long time\n' });
  const old = readFileSync(vaultFile('quiet.md'));
  const oldHash = fs.contentHash(old);
  const kept = () =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM history_blobs WHERE vault_id = ${vaultId} AND hash = ${oldHash}`
      .execute(db)
      .then((r) => r.rows[0].n);
  t.equal(await kept(), 1, 'the created version is kept');
  await sql`UPDATE history_revisions SET at = now() - interval '400 days' WHERE vault_id = ${vaultId} AND path = 'quiet.md'`.execute(
    db,
  );
  const recorder = server.host.manager.registry.providedService('history') as HistoryRecorder;
  const next = Buffer.from('# Quiet\n\nedited at last\n');
  const write: WriteEvent = {
    vaultId,
    kind: 'replace',
    path: 'quiet.md',
    target: 'note',
    incumbent: { bytes: old, hash: oldHash },
    next: { bytes: next, hash: fs.contentHash(next) },
    at: new Date(),
  };
  // The recorder knows the incumbent as the path's latest kept version, so its before stores nothing; the prune
  // that runs before the write's after drops that 400-day-old revision, the only one naming the version.
  await recorder.before(write);
  const pruned = await recorder.prune();
  t.ok(pruned.revisions >= 1, 'the old revision is pruned');
  await recorder.after(write);
  t.equal(await kept(), 1, "the replaced version is still kept: the write's revision names bytes that exist");
  const [revision] = (
    await sql<{ previous_hash: string }>`SELECT previous_hash FROM history_revisions
      WHERE vault_id = ${vaultId} AND path = 'quiet.md' ORDER BY id DESC LIMIT 1`.execute(db)
  ).rows;
  t.equal(revision.previous_hash, oldHash);
});

t.test('when the prior version cannot be kept, the write is refused (history.onRecordFailure: refuse)', async (t) => {
  const db = server.host.database.db;
  await sql`ALTER TABLE history_blobs RENAME TO history_blobs_away`.execute(db);
  t.teardown(() => sql`ALTER TABLE history_blobs_away RENAME TO history_blobs`.execute(db).then(() => undefined));
  const before = readFileSync(vaultFile('plan.md'), 'utf8');
  const r = await refused('alice', 'edit_note', { path: 'plan', content: 'lost?\n', append: true });
  t.equal(r?.code, 'write_not_recorded');
  t.equal(r?.setting, 'history.onRecordFailure');
  t.equal(readFileSync(vaultFile('plan.md'), 'utf8'), before, 'nothing written');
});
