// Settings: defaults, environment overrides, and refusals that name the key and the fix.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_CONFIG_FILE, envName, loadSettings, SettingsError } from '../../../src/host/settings/load.js';
import { readConfigFile } from '../../../src/host/settings/file.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-settings-'));
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};
const problemsOf = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (e) {
    if (e instanceof SettingsError) return [...e.problems];
    throw e;
  }
  return [];
};

// The operator may edit config/default.yaml to serve their own vault: tests read it only to check that it
// loads, and take the documented defaults from an empty file.
t.test('the shipped default file loads; an empty file gives the documented defaults', async (t) => {
  t.doesNotThrow(() => loadSettings({ file: DEFAULT_CONFIG_FILE, env: {} }));
  const s = loadSettings({ file: file('empty.yaml', '{}\n'), env: {} });
  t.equal(s.host.vault.path, './vault');
  t.equal(s.host.server.host, '127.0.0.1');
  t.equal(s.host.server.port, 3737);
  t.equal(s.host.database.url, 'pglite:./data/db');
  t.equal(s.host.server.publicUrl, null);
  t.same(s.host.plugins, []);
});

t.test('EXO_ variables override leaves, typed', async (t) => {
  const s = loadSettings({
    file: file('plain.yaml', 'families: {}\n'),
    env: {
      EXO_VAULT_PATH: '/srv/v',
      EXO_SERVER_PORT: '8080',
      EXO_DATABASE_URL: 'postgres://u@127.0.0.1/db',
      EXO_FAMILIES_NOTES_READ_ONLY: 'true',
      EXO_ADMISSION_CONCURRENCY_WRITE: '2',
    },
  });
  t.equal(s.host.vault.path, '/srv/v');
  t.equal(s.host.server.port, 8080);
  t.equal(s.host.database.url, 'postgres://u@127.0.0.1/db');
  t.same(s.host.families.notes, { enabled: true, readOnly: true });
  t.equal(s.host.admission.concurrency.write, 2);
  t.equal(envName(['server', 'publicUrl']), 'SERVER_PUBLIC_URL');
});

t.test('unknown keys, wrong types and impossible combinations are refused by name', async (t) => {
  t.match(
    problemsOf(() => loadSettings({ file: file('a.yaml', 'server:\n  prot: 1\n'), env: {} })),
    [/unknown key server\.prot/],
  );
  t.match(
    problemsOf(() => loadSettings({ file: file('b.yaml', 'server:\n  port: "high"\n'), env: {} })),
    [/server\.port: .*number.*EXO_SERVER_PORT/],
  );
  t.match(
    problemsOf(() => loadSettings({ file: file('c.yaml', 'server:\n  host: 0.0.0.0\n'), env: {} })),
    [/server\.publicUrl/],
  );
  t.match(
    problemsOf(() => loadSettings({ file: file('d.yaml', 'database:\n  url: mysql://x\n'), env: {} })),
    [/database\.url/],
  );
  t.match(
    problemsOf(() => loadSettings({ file: file('plain.yaml', 'families: {}\n'), env: { EXO_SERVER_PRT: '1' } })),
    [/EXO_SERVER_PRT matches no setting/],
  );
  t.same(
    loadSettings({ file: file('plain.yaml', 'families: {}\n'), env: { EXO_SERVR_PORT: '1' } }).familyEnv,
    { EXO_SERVR_PORT: '1' },
    'a name outside the host sections is left for the family loader',
  );
  t.match(
    problemsOf(() => loadSettings({ file: file('e.yaml', 'a: &a [1]\nb: [*a, *a]\nvault: [\n'), env: {} })),
    [/YAML error/],
  );
  t.match(
    problemsOf(() => loadSettings({ file: path.join(dir, 'missing.yaml'), env: {} })),
    [/cannot be read/],
  );
  t.match(
    problemsOf(() => loadSettings({ file: file('f.yaml', 'families:\n  Notes: {}\n'), env: {} })),
    [/families\.Notes/],
  );
});

t.test('sections the host does not own pass through for families to claim', async (t) => {
  const s = loadSettings({ file: file('g.yaml', 'search:\n  rrfK: 60\n'), env: { EXO_SEARCH_RRF_K: '30' } });
  t.same(s.sections, { search: { rrfK: 30 } });
});

t.test('every shipped example config is valid', async (t) => {
  const { readdirSync } = await import('node:fs');
  const examples = path.join(path.dirname(DEFAULT_CONFIG_FILE), 'examples');
  const files = readdirSync(examples).filter((f) => f.endsWith('.yaml'));
  t.ok(files.length >= 3);
  for (const f of files) t.doesNotThrow(() => loadSettings({ file: path.join(examples, f), env: {} }), f);
});

t.test('~/ expands to the home directory', async (t) => {
  const { resolveFrom } = await import('../../../src/host/settings/load.js');
  t.equal(resolveFrom('/base', '~/v'), path.join(os.homedir(), 'v'));
  t.equal(resolveFrom('/base', 'v'), '/base/v');
});

t.test('the same config text read twice parses once; each reader gets its own copy', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-settings-twice-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'config.yaml');
  writeFileSync(file, 'vault:\n  path: ./v\nplugins: [a]\n');
  const first = readConfigFile(file);
  (first.vault as Record<string, unknown>).path = 'changed by the first reader';
  (first.plugins as string[]).push('b');
  t.same(
    readConfigFile(file),
    { vault: { path: './v' }, plugins: ['a'] },
    'the second read is the file, not the first reader',
  );
  writeFileSync(file, 'vault:\n  path: ./w\n');
  t.same(readConfigFile(file), { vault: { path: './w' } }, 'a changed file is parsed again');
  writeFileSync(file, 'vault: [unclosed\n');
  t.throws(() => readConfigFile(file), /YAML error/);
  t.throws(() => readConfigFile(file), /YAML error/, 'a broken file is refused every time');
});
