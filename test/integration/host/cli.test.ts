// The command line as operators use it: keys create prints only the key on stdout, list and revoke
// work on the same database, doctor reports the platform and configuration, bad config exits 2.
import t from 'tap';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { pgliteTemplate } from '../../../src/host/testing/harness.js';
import { cliArgs } from '../../../src/host/testing/cli.js';

t.setTimeout(300_000); // every CLI call is a real process start

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-cli-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(path.join(dir, 'vault'));
cpSync(await pgliteTemplate(), path.join(dir, 'db'), { recursive: true });
const configFile = path.join(dir, 'config.yaml');
writeFileSync(
  configFile,
  YAML.stringify({
    vault: { path: path.join(dir, 'vault') },
    database: { url: `pglite:${path.join(dir, 'db')}` },
    families: {},
    log: { level: 'silent' },
  }),
);

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...cliArgs(), ...args],
      { cwd: root, env: { ...process.env, EXO_CONFIG: '' } },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

t.test('keys create prints the raw key as the only stdout line; list and revoke see it', async (t) => {
  const created = await cli(
    'keys',
    'create',
    '--name',
    'ci-bot',
    '--scope',
    'read',
    '--expires',
    '30d',
    '--config',
    configFile,
  );
  t.equal(created.code, 0, created.stderr);
  const lines = created.stdout.split('\n').filter(Boolean);
  t.equal(lines.length, 1);
  t.match(lines[0], /^exo_[A-Za-z0-9_-]{43}$/);
  const listed = await cli('keys', 'list', '--config', configFile);
  t.match(listed.stdout, /ci-bot\texo_.{6}…\tread\tactive\t20\d\d-/);
  t.notOk(listed.stdout.includes(lines[0]), 'the secret is never listed');
  const revoked = await cli('keys', 'revoke', 'ci-bot', '--config', configFile);
  t.equal(revoked.code, 0);
  t.match((await cli('keys', 'list', '--config', configFile)).stdout, /ci-bot\t.*\trevoked/);
  t.equal((await cli('keys', 'revoke', 'nobody', '--config', configFile)).code, 1);
  t.match(
    (await cli('keys', 'create', '--name', 'x', '--expires', 'tomorrow', '--config', configFile)).stderr,
    /neither a date/,
  );
});

t.test('doctor checks platform, configuration, database and families', async (t) => {
  const out = await cli('doctor', '--config', configFile);
  t.match(out.stdout, /ok {3}config:/);
  t.match(out.stdout, /ok {3}platform: openat2/);
  t.match(out.stdout, /ok {3}database: pglite/);
  t.equal(out.code, /FAIL/.test(out.stdout) ? 1 : 0);
});

t.test('doctor fails the config check on an unknown family key instead of calling the file valid', async (t) => {
  const bad = path.join(dir, 'family-typo.yaml');
  writeFileSync(
    bad,
    YAML.stringify({
      vault: { path: path.join(dir, 'vault') },
      database: { url: `pglite:${path.join(dir, 'db')}` },
      log: { level: 'silent' },
      search: { rrfKay: 3 },
    }),
  );
  const out = await cli('doctor', '--config', bad);
  t.equal(out.code, 1);
  t.match(out.stdout, /FAIL config: .*unknown key search\.rrfKay/);
  t.notMatch(out.stdout, /ok {3}config/);
});

t.test('an invalid config refuses to start, naming the key', async (t) => {
  const bad = path.join(dir, 'bad.yaml');
  writeFileSync(bad, 'server:\n  port: -1\n  colour: blue\n');
  const out = await cli('migrate', '--config', bad);
  t.equal(out.code, 2);
  t.match(out.stderr, /unknown key server\.colour/);
  t.match(out.stderr, /server\.port/);
});

t.test('families contribute commands: exocortex search rebuild-keyword', async (t) => {
  const out = await cli('search', 'rebuild-keyword', '--config', configFile);
  t.equal(out.code, 0, out.stderr);
  t.match(out.stderr, /rebuilt keyword vectors of \d+ notes for english/);
  const list = await cli('search', '--config', configFile);
  t.match(list.stderr, /exocortex search reset-embeddings/);
  const unknown = await cli('nosuchthing', '--config', configFile);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /neither a command nor an installed family/);
});

t.test(
  "Node 22.1 and later keep the CLI's compiled code in the user's cache directory; Node 20 writes nothing",
  async (t) => {
    const cache = mkdtempSync(path.join(os.tmpdir(), 'exo-xdg-cache-'));
    t.teardown(() => rmSync(cache, { recursive: true, force: true }));
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_CACHE_HOME: cache };
    delete env.NODE_COMPILE_CACHE;
    delete env.NODE_DISABLE_COMPILE_CACHE;
    await new Promise<void>((resolve, reject) =>
      execFile(process.execPath, [...cliArgs(), '--version'], { env }, (e) => (e ? reject(e) : resolve())),
    );
    const dir = path.join(cache, 'exocortex', 'compile-cache');
    const files = existsSync(dir) ? readdirSync(dir, { recursive: true }).length : 0;
    if (typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function')
      t.ok(files > 0, `Node ${process.version}: the cache holds ${files} entries`);
    else t.equal(files, 0, `Node ${process.version} has no compile cache: nothing written`);
  },
);
