// New embedded databases from a template: initdb costs PGlite a few CPU-seconds for each new data
// directory, a copy of an initialised one a fraction of that. The template is made once per PGlite build
// (PGlite and pgvector versions) in a cache folder and copied into a data directory that has no database
// yet. Off unless EXOCORTEX_PGLITE_TEMPLATES names that folder: the test loader sets it (the suite creates
// hundreds of databases, in its own processes and the CLI processes they start); a server's first start
// could use it later. A template holds what initdb and the engine's extensions create, nothing of ours:
// migrations still run on every new database (the test harness keeps a migrated one of its own on top).
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { vector } from '@electric-sql/pglite-pgvector';
import { LOCK_FILE } from '../owner-lock.js';

/** The environment variable naming the template cache folder. */
export const TEMPLATES_ENV = 'EXOCORTEX_PGLITE_TEMPLATES';
const READY = 'READY';

/** The version of the package that a module belongs to (its nearest package.json with a name). */
function packageVersion(specifier: string): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.resolve(specifier))); ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      const m = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
      if (m.name) return `${m.name}@${m.version}`;
    }
    if (path.dirname(dir) === dir) return specifier;
  }
}

/** What an initialised data directory depends on: the engine's build and its extensions. */
export function templateKey(): string {
  const h = createHash('sha256');
  for (const p of ['@electric-sql/pglite', '@electric-sql/pglite-pgvector']) h.update(packageVersion(p)).update('\0');
  return h.digest('hex').slice(0, 16);
}

/**
 * The initialised template in `cacheDir`, made now if absent. Concurrent makers each build their own
 * staging folder and one rename wins, so no process ever copies a half-made template.
 */
export async function initialisedTemplate(cacheDir: string): Promise<string> {
  const template = path.join(cacheDir, `exocortex-pglite-initdb-${templateKey()}`);
  if (existsSync(path.join(template, READY))) return template;
  const staging = `${template}.${process.pid}.${Date.now()}`;
  try {
    const pglite = await PGlite.create({ dataDir: staging, extensions: { vector, pg_trgm } });
    await pglite.exec('CREATE EXTENSION IF NOT EXISTS vector; CREATE EXTENSION IF NOT EXISTS pg_trgm;');
    await pglite.close();
    writeFileSync(path.join(staging, READY), '');
    renameSync(staging, template);
  } catch (e) {
    rmSync(staging, { recursive: true, force: true });
    // Another process won the rename; anything else is a real failure.
    if (!existsSync(path.join(template, READY))) throw e;
  }
  return template;
}

/**
 * Copy the initialised template into `dataDir` when templates are on and the directory holds no database
 * yet (absent, empty, or only the owner's lock file). Returns whether it did.
 */
export async function seedFromTemplate(dataDir: string, cacheDir = process.env[TEMPLATES_ENV]): Promise<boolean> {
  if (!cacheDir || dataDir.startsWith('memory://')) return false;
  const present = existsSync(dataDir) ? readdirSync(dataDir) : [];
  if (present.some((entry) => entry !== LOCK_FILE)) return false;
  const template = await initialisedTemplate(cacheDir);
  cpSync(template, dataDir, {
    recursive: true,
    filter: (src) => src === template || ![LOCK_FILE, READY].includes(path.relative(template, src)),
  });
  return true;
}
