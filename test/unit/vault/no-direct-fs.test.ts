// Enforces that src/host/vault/ is the only code touching vault bytes: nothing else in src/ or plugins/
// may import node:fs / fs / fs/promises, except the allowlisted host files that read non-vault files.

import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Files allowed to import fs, each with why (none of them may open vault notes). Missing ones are skipped. */
const ALLOWLIST: Record<string, string> = {
  'src/host/settings/file.ts': 'reads the config file',
  'src/host/settings/paths.ts': 'whether the user config file and a git checkout exist (metadata only)',
  'src/host/settings/relay-card.ts':
    "reads and writes the stdio relay's card in the user's cache directory (derived paths only)",
  'src/host/package-info.ts': "reads the package's own package.json (its root and version)",
  'src/cli/doctor.ts': 'checks that the vault root folder exists and is writable (metadata only)',
  'src/cli/program.ts': 'CLI: config and key files',
  'src/cli/init.ts': 'writes the user config file',
  'src/cli/owner.ts': 'CLI: realpath of the config vault and the running server vault, to say which it attached to',
  'src/host/db/engines/pglite.ts': 'the PGlite data directory',
  'src/host/db/engines/pglite-template.ts': 'the initialised PGlite template or archive seeding a new data directory',
  'src/host/db/engines/pglite-archive.ts': 'packs and unpacks an initialised PGlite data directory (never the vault)',
  'src/host/db/engines/pglite-profile.ts':
    "reads its thread's CPU time from /proc and writes the statement profile an operator asked for (never the vault)",
  'src/host/db/index.ts': 'the data directory',
  'src/host/db/owner-lock.ts': 'the lock file inside the embedded database directory',
  'src/host/admin/channel-server.ts':
    "the admin socket file (its mode, and unlinking a dead owner's socket); realpath of two vault roots, to compare a relay's vault with the server's",
  'src/host/admin/channel-client.ts': 'stats the admin socket (owner and mode) before connecting to it',
  'src/host/testing/external-writer-race.ts': 'test harness: plays the outside editor that writes a vault note',
  'src/host/families/discover.ts': 'the families loader (family manifests and code)',
  'src/host/families/tool-compiler.ts': 'the families loader (tool schema JSON)',
  'src/host/reload.ts': 'watches the config file for reloads',
  'src/host/testing/harness.ts': 'test harness: seeds fixture vaults before a server starts',
  'src/host/testing/cluster.ts': 'test harness: the multi-process topology (configs, logs, vault folders)',
  'src/host/testing/cli.ts': 'test harness: whether a compiled CLI newer than every source exists',
  'src/host/testing/postgres-server.ts': 'test harness: a throwaway PostgreSQL data directory',
  'src/host/testing/replicas-clients.ts':
    "test harness: the replicas scenario's outside editor writes vault notes, a writer reads one it may have written",
  'src/host/testing/replicas-oracles.ts': 'test harness: the replicas scenario compares vault files with the index',
  'src/host/testing/replicas-scenario.ts':
    "test harness: the replicas scenario's temp folder and the logs of a failed run",
  'src/panel/server.ts': 'streams htmx.min.js from the htmx.org package (node_modules, never the vault)',
  'plugins/transfer/receive.ts':
    'streams an upload into a private temp file outside the vault (published through VaultFs)',
  'plugins/transfer/routes.ts': 'reads that temp file back before publishing it through VaultFs',
};

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const FS_IMPORT = /(?:from\s*|import\s*\(\s*|require\s*\(\s*|import\s+)['"](?:node:)?fs(?:\/promises)?['"]/;

function sources(dir: string): string[] {
  const abs = path.join(REPO, dir);
  if (!fs.existsSync(abs)) return [];
  const out: string[] = [];
  const visit = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
      const p = path.join(d, e.name);
      if (e.isDirectory()) visit(p);
      else if (/\.(c|m)?[jt]s$/.test(e.name) && !e.name.endsWith('.d.ts'))
        out.push(path.relative(REPO, p).split(path.sep).join('/'));
    }
  };
  visit(abs);
  return out;
}

t.test('no fs imports outside src/host/vault/ (except the allowlist)', async (t) => {
  const files = [...sources('src'), ...sources('plugins')];
  t.ok(files.length > 0, `${files.length} source files scanned`);
  const offenders = files.filter(
    (f) =>
      !f.startsWith('src/host/vault/') &&
      !(f in ALLOWLIST) &&
      FS_IMPORT.test(fs.readFileSync(path.join(REPO, f), 'utf8')),
  );
  t.same(offenders, [], 'only src/host/vault/ may touch vault bytes: use the VaultFs service');
});

t.test('the detector catches every import spelling', async (t) => {
  for (const s of [
    `import fs from 'node:fs';`,
    `import { readFile } from "fs/promises";`,
    `const fs = require('fs');`,
    `await import('node:fs/promises')`,
    `import 'fs';`,
    `export { x } from 'node:fs';`,
  ]) {
    t.ok(FS_IMPORT.test(s), s);
  }
  for (const s of [`import x from 'node:path';`, `import y from './fs-helpers.js';`, `import z from 'fsevents';`])
    t.notOk(FS_IMPORT.test(s), s);
});
