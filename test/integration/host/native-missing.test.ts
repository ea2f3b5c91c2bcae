// A missing or unloadable native core: every command that serves or touches the database refuses to start
// with exit status 2 and a message naming the fix, before answering anything (a stdio server that answered
// `initialize` and then listed no tools would look empty to its client rather than broken). `doctor`
// still runs and reports it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { cliArgs } from '../../../src/host/testing/cli.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-native-missing-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const notElf = path.join(dir, 'broken.node');
writeFileSync(notElf, 'not a shared object');

const initialize = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
})}\n`;

function exocortex(args: string[], addon: string) {
  return spawnSync(process.execPath, [...cliArgs(), ...args], {
    cwd: root,
    encoding: 'utf8',
    input: initialize,
    timeout: 60_000,
    env: {
      ...process.env,
      EXOCORTEX_NATIVE_ADDON: addon,
      EXO_VAULT_PATH: path.join(dir, 'vault'),
      EXO_DATABASE_URL: `pglite:${path.join(dir, 'db')}`,
    },
  });
}

for (const [what, addon] of [
  ['missing', path.join(dir, 'absent.node')],
  ['unloadable', notElf],
] as const) {
  t.test(`${what} native core: stdio refuses to start and names the fix`, async (t) => {
    const r = exocortex(['stdio'], addon);
    t.equal(r.status, 2, 'exit status 2');
    t.equal(r.stdout, '', 'initialize is not answered');
    t.match(r.stderr, /native vault core \(exocortex_native\.node\) cannot be loaded on linux-/);
    t.match(r.stderr, what === 'missing' ? /does not exist/ : /failed to load/);
    t.match(r.stderr, /prebuilt binaries for linux-x64 and linux-arm64 \(glibc\)/);
    t.match(r.stderr, /npx node-gyp rebuild/);
  });
}

t.test('serve and migrate refuse the same way', async (t) => {
  for (const cmd of [['serve'], ['migrate']]) {
    const r = exocortex(cmd, path.join(dir, 'absent.node'));
    t.equal(r.status, 2, `${cmd[0]}: exit status 2`);
    t.match(r.stderr, /native vault core/, cmd[0]);
  }
});

t.test('--version and doctor run without it', async (t) => {
  const v = exocortex(['--version'], path.join(dir, 'absent.node'));
  t.equal(v.status, 0);
  const d = exocortex(['doctor'], path.join(dir, 'absent.node'));
  t.not(d.status, 0, 'doctor fails');
  t.match(d.stdout + d.stderr, /absent\.node does not exist/, 'doctor runs and names the missing core');
});
