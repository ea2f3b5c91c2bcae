// `exocortex stdio` with no server to relay to serves here: it answers initialize before the command parser,
// the settings schema and the host load (a desktop client waits on that answer at every launch), naming the
// config's vault; a config the schema refuses then ends the process with the refusal, status 2, one line.
import t from 'tap';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cliArgs } from '../../../src/host/testing/cli.js';
import { pgliteTemplate } from '../../../src/host/testing/harness.js';
import { relaySettings } from '../../../src/host/settings/relay-card.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-stdio-start-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(path.join(dir, 'vault'));
writeFileSync(path.join(dir, 'vault', 'a.md'), 'a\n');
cpSync(await pgliteTemplate(), path.join(dir, 'db'), { recursive: true });
// A cache directory of its own: the relay cards are the user's few most recent configs, and the suite's other
// files, writing theirs meanwhile, would push this file's card out (its stdio would then read the YAML first).
const env = { ...process.env, EXO_CONFIG: '', XDG_CACHE_HOME: path.join(dir, 'cache') };

function config(name: string, extra = ''): string {
  const file = path.join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `vault:\n  path: ./vault\n  name: Garden of ${name}\ndatabase:\n  url: pglite:./db\nlog:\n  level: warn\n${extra}`,
  );
  return file;
}

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'start-test', version: '1' } },
};

/** `exocortex stdio --config file` sent initialize; resolves with its output once it exits. */
function stdio(file: string, log?: string) {
  const hook = pathToFileURL(path.join(root, 'test/fixtures/log-imports.mjs')).href;
  const child = spawn(process.execPath, [...(log ? ['--import', hook] : []), ...cliArgs(), 'stdio', '--config', file], {
    cwd: dir,
    env: { ...env, ...(log ? { LOG_IMPORTS_TO: log } : {}) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    // Answered: end the input, which ends the process once its host is up.
    if (stdout.includes('"id":1')) child.stdin.end();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdin.write(`${JSON.stringify(initialize)}\n`);
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

t.test('stdio-served.first: initialize is answered before the command parser and the settings load', async (t) => {
  const file = config('first');
  // The card the first run of a config writes: later runs read no YAML to find the relay's settings.
  await relaySettings({ file, cwd: dir, env });
  const log = path.join(dir, 'imports.txt');
  const r = await stdio(file, log);
  t.equal(r.code, 0, `ends cleanly when the client closes its input: ${r.stderr}`);
  const answer = JSON.parse(r.stdout.split('\n').find((l) => l.includes('"id":1')) ?? '{}');
  t.match(answer.result?.instructions, /vault "Garden of first"/, "the instructions name the config's vault");
  const loaded = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  const first = (part: string) => loaded.findIndex((u) => u.includes(part));
  // The SDK: a build loads the host's bundle of it; the test loader resolves our own modules itself, so from
  // the sources the SDK's packages show.
  const sdk = loaded.findIndex(
    (u) => u.includes('/dist/src/host/mcp/sdk.js') || u.includes('@modelcontextprotocol/server'),
  );
  t.ok(sdk >= 0, 'the SDK server loaded');
  t.equal(first('/commander/'), -1, 'the command parser never loads');
  t.ok(first('/yaml/') > sdk, 'the config is parsed after the SDK server loaded');
  t.ok(first('/@electric-sql/') > first('/yaml/'), 'PGlite loads with the host, after the settings');
});

t.test('stdio-served.refused: a config the schema refuses ends it with the refusal, status 2', async (t) => {
  const file = config('refused', 'admission:\n  callsPerMinute: lots\n');
  await relaySettings({ file, cwd: dir, env });
  const r = await stdio(file);
  t.equal(r.code, 2, r.stderr);
  t.match(
    r.stderr,
    /^exocortex: invalid configuration:\n\s+- admission\.callsPerMinute/m,
    'the refusal names the setting',
  );
  t.notMatch(r.stderr, /\n\s+at /, 'the refusal alone, no stack');
});

t.test(
  'stdio-served.relay-refused: relay settings the schema refuses are reported as every command does',
  async (t) => {
    const r = await stdio(config('bad-socket', 'admin:\n  socketPath: 3\n'));
    t.equal(r.code, 2, r.stderr);
    t.match(r.stderr, /^exocortex: invalid configuration:\n\s+- admin\.socketPath/m);
    t.notMatch(r.stdout, /"id":1/, 'nothing answered');
  },
);
