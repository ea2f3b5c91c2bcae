// `exocortex stdio` beside a running server (issue 43): asked for another vault than the server serves
// (EXO_VAULT_PATH pointing elsewhere), it refuses naming both paths instead of bridging silently to the
// server's vault; asked for the same vault, it bridges as before.
import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { cliArgs } from '../../../src/host/testing/cli.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const server = await startTestServer({ builtinDir: null, files: { 'a.md': 'a\n' } });
const other = mkdtempSync(path.join(os.tmpdir(), 'exo-other-vault-'));
t.teardown(async () => {
  await server.close();
  rmSync(other, { recursive: true, force: true });
});

const stdio = (env: Record<string, string>) =>
  new Promise<{ code: number; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      [...cliArgs(), 'stdio', '--config', server.configFile],
      { cwd: root, env: { ...process.env, EXO_CONFIG: '', ...env }, timeout: 60_000 },
      (err, _stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stderr }),
    );
    child.stdin?.end();
  });

t.test('another vault than the running server’s is refused, naming both', async (t) => {
  const r = await stdio({ EXO_VAULT_PATH: other });
  t.equal(r.code, 2, r.stderr);
  t.match(r.stderr, other, 'names the vault asked for');
  t.match(r.stderr, server.vaultDir, 'and the one the server serves');
  t.notMatch(r.stderr, /bridging stdio/);
});

t.test('the same vault is bridged', async (t) => {
  const r = await stdio({});
  t.match(r.stderr, /bridging stdio to the running server/, r.stderr);
});
