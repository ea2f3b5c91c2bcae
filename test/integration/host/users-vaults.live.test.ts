// Users and vaults managed live on a running server, through its admin channel (what the CLI sends) and
// once through the CLI itself: a vault added serves at once beside the others, overlapping and unusable
// roots are refused by name, removal is refused while users use it, a disabled user's key is refused at
// once, and a vault whose root vanishes is unavailable on /health while the others keep serving.
import { sql } from 'kysely';
import t from 'tap';
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AdminClient } from '../../../src/host/admin/channel-client.js';
import type { KeyRow } from '../../../src/host/admin/operations.js';
import { parseRefusalLine } from '../../../src/sdk/refusals.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { cliArgs } from '../../../src/host/testing/cli.js';

t.setTimeout(300_000);

const tmp = mkdtempSync(path.join(os.tmpdir(), 'exo-users-'));
const rootX = path.join(tmp, 'x');
const rootY = path.join(tmp, 'y');
mkdirSync(path.join(rootX, 'sub'), { recursive: true });
mkdirSync(rootY);
writeFileSync(path.join(rootX, 'X note.md'), '# X\n\nonly in x\n');
writeFileSync(path.join(rootY, 'Y note.md'), '# Y\n\nonly in y\n');

const server = await startTestServer({ files: { 'Home.md': '# home\n' }, config: { index: { rootCheckSeconds: 0 } } });
t.teardown(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});
const admin = (await AdminClient.connect(server.host.admin!.socketPath))!;
t.teardown(() => admin.close());

const failure = async (p: Promise<unknown>) =>
  p.then(
    () => ({ code: 'none', message: '' }),
    (e: { code: string; message: string }) => ({ code: e.code, message: e.message }),
  );
const mint = async (user: string) =>
  (await admin.post<{ raw: string; key: KeyRow }>('/v1/keys', { name: `${user}-key`, scope: 'readwrite', user })).raw;
const waitIndexed = async (name: string) => {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = server.host.vaults.all().find((x) => x.row.name === name);
    if (v?.index?.status().ready && v.index.status().pending === 0) return;
    if (Date.now() > deadline) throw new Error(`${name} not indexed`);
    await new Promise((r) => setTimeout(r, 50));
  }
};
const listPaths = async (key: string) => {
  const client = await server.connect({ key });
  const r = (await client.callTool({ name: 'list_notes', arguments: {} })) as {
    structuredContent?: { notes: Array<{ path: string }> };
  };
  await client.close();
  return (r.structuredContent?.notes ?? []).map((n) => n.path).sort();
};
const mcpStatus = async (key: string) => {
  const res = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
    }),
  });
  return res.status;
};

t.test('a vault added live serves at once, beside the vault it does not disturb', async (t) => {
  const defaultIndex = server.host.index;
  const added = await admin.post<{ vault: { name: string; status: { state: string } } }>('/v1/vaults', {
    name: 'xvault',
    root: rootX,
  });
  t.equal(added.vault.status.state, 'serving');
  await admin.post('/v1/users', { name: 'carol', vault: 'xvault' });
  const carol = await mint('carol');
  await waitIndexed('xvault');
  t.same(await listPaths(carol), ['X note.md'], 'carol sees her vault only');
  t.ok((await listPaths(server.key)).includes('Home.md'), 'the operator still sees vault.path');
  t.equal(server.host.index, defaultIndex, "vault.path's pipeline was not restarted");
  t.notOk((await listPaths(server.key)).includes('X note.md'), 'nothing of xvault reaches the operator vault');
});

t.test('overlapping and unusable roots are refused, naming both paths', async (t) => {
  symlinkSync(rootX, path.join(tmp, 'link-to-x'));
  symlinkSync(path.join(server.vaultDir), path.join(tmp, 'link-into-default'));
  const cases: Array<[string, string, string, RegExp]> = [
    ['nested', path.join(rootX, 'sub'), 'vault_overlap', /lies inside .*the vault "xvault"/],
    ['containing', tmp, 'vault_overlap', /contains/],
    ['symlink to a root', path.join(tmp, 'link-to-x'), 'vault_overlap', /is the same folder as .*xvault/],
    [
      'symlink into vault.path',
      path.join(tmp, 'link-into-default'),
      'vault_overlap',
      /is the same folder as .*"vault"/,
    ],
    ['missing', path.join(tmp, 'nope'), 'vault_root_unusable', /does not exist/],
  ];
  for (const [what, root, code, message] of cases) {
    const f = await failure(admin.post('/v1/vaults', { name: `bad-${what.replace(/\W+/g, '-')}`, root }));
    t.equal(f.code, code, `${what}: ${code}`);
    t.match(f.message, message, `${what}: ${f.message}`);
    if (code === 'vault_overlap') t.ok(f.message.includes(root), `${what}: names the refused root`);
  }
  const names = (await admin.get<{ vaults: Array<{ name: string }> }>('/v1/vaults')).vaults.map((v) => v.name);
  t.same(
    names.filter((n) => n.startsWith('bad-')),
    [],
    'nothing was added',
  );
  // A bind mount of a folder inside another root, where this machine lets us mount.
  const bind = path.join(tmp, 'bind');
  mkdirSync(bind);
  const mounted = spawnSync('mount', ['--bind', path.join(rootX, 'sub'), bind]).status === 0;
  if (!mounted) t.pass('skipped: bind mounts need privileges this machine does not grant');
  else {
    t.teardown(() => void spawnSync('umount', [bind]));
    const f = await failure(admin.post('/v1/vaults', { name: 'bound', root: bind }));
    t.equal(f.code, 'vault_overlap', `a bind mount inside xvault: ${f.message}`);
  }
});

t.test("sharing is the operator's explicit choice; removal is refused while users use the vault", async (t) => {
  const f = await failure(admin.post('/v1/users', { name: 'dave', vault: 'xvault' }));
  t.equal(f.code, 'vault_not_shared');
  t.match(f.message, /carol/);
  t.match((await failure(admin.post('/v1/users', { name: 'erin', vault: 'no-such' }))).code, 'unknown_vault');
  await admin.post('/v1/users', { name: 'dave', vault: 'xvault', share: true });
  const dave = await mint('dave');
  t.same(await listPaths(dave), ['X note.md'], 'a shared vault serves both');
  const xId = server.host.vaults.all().find((v) => v.row.name === 'xvault')!.row.id;
  const eventsOf = async (id: number) =>
    Number(
      (
        await server.host.database.db
          .selectFrom('change_events')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('vault_id', '=', id)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const writer = await server.connect({ key: dave });
  await writer.callTool({ name: 'create_note', arguments: { path: 'Dave.md', content: '# Dave\n' } });
  await writer.close();
  const deadline = Date.now() + 20_000;
  while ((await eventsOf(xId)) === 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 100));
  t.ok((await eventsOf(xId)) > 0, "the change feed holds xvault's events");
  // A name the graph's sweep still had queued for the vault (a table keyed by vault alone, as the feed's).
  await sql`INSERT INTO graph_pending (vault_id, name_key) VALUES (${xId}, 'x note')`.execute(server.host.database.db);
  const r = await failure(admin.post('/v1/vaults/remove', { name: 'xvault' }));
  t.equal(r.code, 'vault_in_use');
  t.match(r.message, /carol, dave/);
  const removed = await admin.post<{ usersDisabled: string[] }>('/v1/vaults/remove', { name: 'xvault', force: true });
  t.same(removed.usersDisabled, ['carol', 'dave']);
  t.equal(await mcpStatus(dave), 401, "a removed vault's users are refused at once");
  t.notOk(
    server.host.vaults.all().some((v) => v.row.name === 'xvault'),
    'its pipeline stopped',
  );
  t.equal(await eventsOf(xId), 0, "the families dropped the removed vault's rows (pruneVaults)");
  const queued = await sql<{ n: number }>`SELECT count(*)::int AS n FROM graph_pending WHERE vault_id = ${xId}`.execute(
    server.host.database.db,
  );
  t.equal(queued.rows[0].n, 0, "and the graph's queue its names");
  t.ok((await listPaths(server.key)).includes('Home.md'), 'vault.path keeps serving');
});

t.test("a disabled user's key is refused at once, cached or not", async (t) => {
  await admin.post('/v1/vaults', { name: 'yvault', root: rootY });
  await admin.post('/v1/users', { name: 'frank', vault: 'yvault' });
  const frank = await mint('frank');
  t.equal(await mcpStatus(frank), 200, 'the key works (and is now cached)');
  const d = await admin.post<{ keys: number }>('/v1/users/disable', { name: 'frank' });
  t.equal(d.keys, 1);
  t.equal(await mcpStatus(frank), 401, 'refused on the very next request');
  const f = await failure(admin.post('/v1/keys', { name: 'again', scope: 'read', user: 'frank' }));
  t.match(f.message, /disabled/, 'no key is minted for a disabled user');
});

t.test('a vault whose root vanishes is unavailable on /health; the others keep serving', async (t) => {
  await admin.post('/v1/users', { name: 'gina', vault: 'yvault', share: true });
  const gina = await mint('gina');
  await waitIndexed('yvault');
  renameSync(rootY, `${rootY}.away`);
  await server.host.vaults.check();
  const health = (await (
    await fetch(`${server.url}/health`, { headers: { authorization: `Bearer ${server.key}` } })
  ).json()) as {
    status: string;
    vaults: Record<string, { state: string; reason?: string }>;
  };
  t.equal(health.vaults.yvault.state, 'unavailable');
  t.match(health.vaults.yvault.reason, /vanished/);
  t.equal(health.vaults.vault.state, 'serving');
  t.equal(health.status, 'degraded');
  const asGina = (await (
    await fetch(`${server.url}/health`, { headers: { authorization: `Bearer ${gina}` } })
  ).json()) as Record<string, unknown>;
  t.same(asGina, { status: 'degraded' }, "a user who is not an admin sees the overall status, not other users' vaults");
  const client = await server.connect({ key: gina });
  const r = (await client.callTool({ name: 'list_notes', arguments: {} })) as { content: Array<{ text: string }> };
  t.equal(parseRefusalLine(r.content[0].text)?.code, 'vault_unavailable');
  t.notMatch(r.content[0].text, new RegExp(tmp), 'the refusal names no path');
  await client.close();
  t.ok((await listPaths(server.key)).length > 0, 'vault.path keeps serving');
  renameSync(`${rootY}.away`, rootY);
  await server.host.vaults.check();
  await waitIndexed('yvault');
  t.same(await listPaths(gina), ['Y note.md'], 'served again once the root is back');
});

t.test('the CLI reaches the running server for users, vaults and keys', async (t) => {
  // Asynchronous: the server answering the CLI runs in this very process.
  const cli = (...args: string[]) =>
    new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [...cliArgs(), ...args, '--config', server.configFile],
        { encoding: 'utf8', cwd: process.cwd(), env: { ...process.env, EXO_CONFIG: '' } },
        (err, stdout, stderr) =>
          resolve({ status: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  const list = await cli('vaults', 'list');
  t.equal(list.status, 0, list.stderr);
  t.match(list.stdout, /yvault\t.*\tgina/);
  const key = await cli('keys', 'create', '--name', 'cli-key', '--user', 'gina');
  t.equal(key.status, 0, key.stderr);
  t.match(key.stdout.trim(), /^exo_/);
  t.same(await listPaths(key.stdout.trim()), ['Y note.md'], "the key serves gina's vault");
  const refused = await cli('vaults', 'add', 'again', path.join(rootY, '..', 'y'));
  t.equal(refused.status, 1);
  t.match(refused.stderr, /is the same folder as .*yvault/);
});
