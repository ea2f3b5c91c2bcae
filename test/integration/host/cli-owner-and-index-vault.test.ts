// The CLI beside a running server (issue 43): `exocortex index --vault NAME` indexes that served vault,
// and a command whose config names another vault than the server it attaches to (the same database,
// so the same owner) says so, naming both, instead of acting silently on the server's vaults.
import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { AdminClient } from '../../../src/host/admin/channel-client.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { cliArgs } from '../../../src/host/testing/cli.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const server = await startTestServer({ builtinDir: null, files: { 'a.md': 'a\n' } });
const tmp = mkdtempSync(path.join(os.tmpdir(), 'exo-cli-owner-'));
const second = path.join(tmp, 'second');
mkdirSync(second);
writeFileSync(path.join(second, 'b.md'), '# b\n');
const admin = (await AdminClient.connect(server.host.admin!.socketPath))!;
t.teardown(async () => {
  await admin.close();
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});
await admin.post('/v1/vaults', { name: 'second', root: second });

const cli = (...args: string[]) =>
  new Promise<{ code: number; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [...cliArgs(), ...args],
      { cwd: root, env: { ...process.env, EXO_CONFIG: '' }, timeout: 120_000 },
      (err, _stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stderr }),
    );
  });

t.test('index --vault indexes a served vault by name; an unknown name is refused', async (t) => {
  const r = await cli('index', '--vault', 'second', '--config', server.configFile);
  t.equal(r.code, 0, r.stderr);
  t.notMatch(r.stderr, /warning/, 'the server’s own config attaches without a warning');
  const unknown = await cli('index', '--vault', 'nowhere', '--config', server.configFile);
  t.not(unknown.code, 0);
  t.match(unknown.stderr, /no vault named "nowhere"/);
});

t.test('a config naming another vault than the attached server’s is told so', async (t) => {
  const raw = YAML.parse(readFileSync(server.configFile, 'utf8'));
  const other = path.join(tmp, 'other.yaml');
  writeFileSync(other, YAML.stringify({ ...raw, vault: { ...raw.vault, path: second } }));
  const r = await cli('keys', 'list', '--config', other);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stderr, /warning: attached to the running server/);
  t.match(r.stderr, second, "names this config's vault");
  t.match(r.stderr, server.vaultDir, "and the server's");
});
