// The config file's vaults:/users: lists against the CLI's: the file wins for what it names, the CLI
// may not change those, and a contradiction between the two is refused by name (start and reload alike).
import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { usersAddOp, vaultsAddOp, vaultsRemoveOp } from '../../../src/host/admin/account-operations.js';
import { startTestServer } from '../../../src/host/testing/harness.js';

t.setTimeout(300_000);

const tmp = mkdtempSync(path.join(os.tmpdir(), 'exo-declared-'));
for (const d of ['p', 'q', 'r']) mkdirSync(path.join(tmp, d));
const server = await startTestServer({
  config: {
    reload: { watchConfig: false },
    vaults: [{ name: 'pvault', path: path.join(tmp, 'p') }],
    users: [{ name: 'paula', vault: 'pvault' }],
  },
});
t.teardown(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});
const ops = () => server.host.operations;
const failure = async (p: Promise<unknown>) =>
  p.then(
    () => 'none',
    (e: { code: string; message: string }) => `${e.code}: ${e.message}`,
  );

t.test('the CLI refuses to change what the file declares, naming the file', async (t) => {
  t.match(await failure(vaultsRemoveOp(ops(), 'pvault', true)), /^declared_in_config: .*"pvault".*config\.yaml/);
  t.match(await failure(vaultsAddOp(ops(), { name: 'pvault', root: path.join(tmp, 'q') })), /^declared_in_config/);
  t.match(await failure(usersAddOp(ops(), { name: 'paula', vault: 'vault' })), /^declared_in_config/);
});

t.test(
  'a reload declaring what the CLI made differently is refused by name; the previous configuration keeps serving',
  async (t) => {
    await vaultsAddOp(ops(), { name: 'qvault', root: path.join(tmp, 'q') });
    const raw = YAML.parse((await import('node:fs')).readFileSync(server.configFile, 'utf8'));
    writeFileSync(
      server.configFile,
      YAML.stringify({ ...raw, vaults: [...raw.vaults, { name: 'qvault', path: path.join(tmp, 'r') }] }),
    );
    const result = await server.host.reload();
    t.notOk(result.ok);
    t.match(
      result.errors.join('\n'),
      /declares the vault "qvault" at .*\/r, but the database holds a vault "qvault" at .*\/q made with the CLI/,
    );
    t.equal(server.host.vaults.all().find((v) => v.row.name === 'qvault')?.state, 'serving', 'qvault keeps serving');
  },
);

t.test(
  'a reload adding a vault and a user serves them live; users bound to a missing vault are refused by name',
  async (t) => {
    const raw = YAML.parse((await import('node:fs')).readFileSync(server.configFile, 'utf8'));
    const base = { ...raw, vaults: [raw.vaults[0]] };
    writeFileSync(
      server.configFile,
      YAML.stringify({ ...base, users: [...raw.users, { name: 'rita', vault: 'nowhere' }] }),
    );
    const bad = await server.host.reload();
    t.match(bad.errors.join('\n'), /binds the user "rita" to the vault "nowhere", which does not exist/);
    writeFileSync(
      server.configFile,
      YAML.stringify({
        ...base,
        vaults: [...base.vaults, { name: 'rvault', path: path.join(tmp, 'r') }],
        users: [...raw.users, { name: 'rita', vault: 'rvault' }],
      }),
    );
    const ok = await server.host.reload();
    t.ok(ok.ok, ok.errors.join('; '));
    t.equal(
      server.host.vaults.all().find((v) => v.row.name === 'rvault')?.state,
      'serving',
      'rvault serves without a restart',
    );
    writeFileSync(server.configFile, YAML.stringify({ ...base, users: raw.users }));
    const dropped = await server.host.reload();
    t.ok(dropped.ok, dropped.errors.join('; '));
    t.notOk(
      server.host.vaults.all().some((v) => v.row.name === 'rvault'),
      'a vault dropped from the file stops',
    );
  },
);
