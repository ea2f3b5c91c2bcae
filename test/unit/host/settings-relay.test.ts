// The relay's reading of the settings (settings/relay.ts, by hand, without zod) finds the same admin
// socket, database directory, vault and vault name as the server's (load.ts, every section's schema), for defaults,
// the file, and EXO_ variables over both; and refuses what the schema refuses for those keys.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { adminSocketPath } from '../../../src/host/admin/protocol.js';
import { embeddedDir } from '../../../src/host/db/location.js';
import { loadSettings } from '../../../src/host/settings/load.js';
import { loadRelaySettings } from '../../../src/host/settings/relay.js';
import { resolvePath } from '../../../src/host/settings/paths.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-relay-settings-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const file = path.join(dir, 'config.yaml');

const cases: Array<[string, string, Record<string, string>]> = [
  ['nothing set: the defaults', '{}\n', {}],
  ['the file', 'vault:\n  path: ./notes\ndatabase:\n  url: pglite:./state/db\n', {}],
  ['a socket path in the file', 'admin:\n  socketPath: ./run/admin.sock\n', {}],
  ['a server database without a socket', 'database:\n  url: postgres://u@127.0.0.1/x\n', {}],
  [
    'EXO_ variables over the file',
    'vault:\n  path: ./notes\n',
    { EXO_VAULT_PATH: '~/elsewhere', EXO_DATABASE_URL: 'pglite:/srv/db', EXO_ADMIN_SOCKET_PATH: '/run/x.sock' },
  ],
  ['a null socket path is the default', 'admin:\n  socketPath: null\n', {}],
  ['a vault name in the file', 'vault:\n  name: Garden ✿\n', {}],
  ['a vault name from EXO_VAULT_NAME', 'vault:\n  name: from-file\n', { EXO_VAULT_NAME: 'from-env' }],
];

for (const [name, yaml, env] of cases) {
  t.test(`settings-relay.same: ${name}`, async (t) => {
    writeFileSync(file, yaml);
    const full = loadSettings({ file, cwd: dir, env });
    const relay = loadRelaySettings({ file, cwd: dir, env });
    t.equal(relay.socketPath, adminSocketPath(full));
    t.equal(relay.databaseDir, embeddedDir(full.host.database.url, full.baseDir));
    t.equal(relay.vaultPath, resolvePath(full, full.host.vault.path));
    t.equal(relay.vaultName, full.host.vault.name);
  });
}

t.test('settings-relay.refuses: what the schema refuses for the keys the relay reads', async (t) => {
  for (const [yaml, env, said] of [
    ['database:\n  url: mysql://x\n', {}, /database\.url: must start with pglite:/],
    ['database:\n  url: "pglite:"\n', {}, /names no directory/],
    ['vault:\n  path: 3\n', {}, /vault\.path: expected a non-empty string/],
    ['vault: [1]\n', {}, /vault: expected a mapping/],
    ['vault:\n  name: ""\n', {}, /vault\.name: expected a non-empty string/],
    [`vault:\n  name: ${'n'.repeat(81)}\n`, {}, /vault\.name: at most 80 characters/],
    ['{}\n', { EXO_ADMIN_SOCKET_PATH: '' }, /admin\.socketPath: expected a non-empty string/],
  ] as Array<[string, Record<string, string>, RegExp]>) {
    writeFileSync(file, yaml);
    t.throws(() => loadRelaySettings({ file, cwd: dir, env }), { name: 'SettingsError', message: said }, yaml);
    t.throws(() => loadSettings({ file, cwd: dir, env }), { name: 'SettingsError' }, `the server refuses ${yaml} too`);
  }
});
