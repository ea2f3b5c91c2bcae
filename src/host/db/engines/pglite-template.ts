// A new embedded database starts from an initialised data directory instead of running initdb: initdb
// costs PGlite a few CPU-seconds and a second engine instance (~800 MiB resident at its peak), a copy of
// an initialised directory a fraction of that. Two sources, both keyed by the engine's build (PGlite and
// pgvector versions), tried in this order for a directory that holds no database yet:
// - a template cache folder, made on demand, when EXOCORTEX_PGLITE_TEMPLATES names one: the test loader
//   sets it (the suite creates hundreds of databases, in its own processes and the CLI processes they start);
// - the archive our build writes into the package (`dist/pglite/initdb-<key>.tar.gz`, by
//   scripts/postbuild.mjs), which is how a user's first start avoids initdb.
// Neither present, or the archive from another build: PGlite runs initdb as before. Either holds what
// initdb and the engine's extensions create, nothing of ours: migrations run on every new database.
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { vector } from '@electric-sql/pglite-pgvector';
import { PACKAGE_ROOT } from '../../package-info.js';
import { ADMIN_SOCKET_FILE, LOCK_FILE } from '../owner-lock.js';

/** The environment variable naming the template cache folder. */
export const TEMPLATES_ENV = 'EXOCORTEX_PGLITE_TEMPLATES';
/** Where the build puts the initialised archive: inside the package, next to the compiled code. */
export const PACKAGED_ARCHIVES = path.join(PACKAGE_ROOT, 'dist', 'pglite');
/** Bumped when what an initialised directory holds changes (say, another extension created in it). */
const CONTENT_VERSION = '1';
const READY = 'READY';
const STAGING_PREFIX = '.exocortex-seed-';
const REMOVE = { recursive: true, force: true } as const;

/** Where a new data directory's initialised contents may come from. */
export interface SeedSources {
  /** A template cache folder (made on demand). */
  readonly templates?: string;
  /** A folder with `initdb-<key>.tar.gz` archives made by makeInitdbArchive. */
  readonly archives?: string;
}

export function defaultSeedSources(): SeedSources {
  return { templates: process.env[TEMPLATES_ENV] || undefined, archives: PACKAGED_ARCHIVES };
}

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
  const h = createHash('sha256').update(CONTENT_VERSION).update('\0');
  for (const p of ['@electric-sql/pglite', '@electric-sql/pglite-pgvector']) h.update(packageVersion(p)).update('\0');
  return h.digest('hex').slice(0, 16);
}

/** The archive's file name for this engine build. */
export function archiveName(key = templateKey()): string {
  return `initdb-${key}.tar.gz`;
}

/** initdb into `dataDir` (absent or empty) the way the engine opens a database: with its extensions. */
async function initdbInto(dataDir: string): Promise<void> {
  const pglite = await PGlite.create({ dataDir, extensions: { vector, pg_trgm } });
  await pglite.exec('CREATE EXTENSION IF NOT EXISTS vector; CREATE EXTENSION IF NOT EXISTS pg_trgm;');
  await pglite.close();
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
    await initdbInto(staging);
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
 * The build's step: this engine build's archive in `outDir` (default: the package's), made by a real
 * initdb if absent; archives of other builds there are removed. Returns its path and whether it was made.
 */
export async function makeInitdbArchive(outDir = PACKAGED_ARCHIVES): Promise<{ file: string; made: boolean }> {
  const file = path.join(outDir, archiveName());
  if (existsSync(file)) return { file, made: false };
  mkdirSync(outDir, { recursive: true });
  const staging = mkdtempSync(path.join(os.tmpdir(), 'exocortex-initdb-'));
  try {
    await initdbInto(path.join(staging, 'db'));
    const { packDirectory } = await import('./pglite-archive.js');
    packDirectory(path.join(staging, 'db'), `${file}.${process.pid}`);
    renameSync(`${file}.${process.pid}`, file);
  } finally {
    rmSync(staging, { recursive: true, force: true });
    rmSync(`${file}.${process.pid}`, { force: true });
  }
  for (const name of readdirSync(outDir))
    if (/^initdb-.*\.tar\.gz$/.test(name) && name !== path.basename(file)) rmSync(path.join(outDir, name));
  return { file, made: true };
}

export interface Seeded {
  /** Where the directory's contents came from; absent: nothing was copied (PGlite runs initdb if needed). */
  readonly from?: 'template' | 'archive';
  /** The archive that was there but could not be used (PGlite runs initdb then). */
  readonly problem?: string;
}

/**
 * Fill `dataDir` with an initialised database when it holds none yet (absent, empty, or only the owner's
 * lock and socket): from the template cache if one is named, else from this build's archive if present.
 * An archive is unpacked into a staging folder inside `dataDir` and moved in with PG_VERSION last, so a
 * start cut short never leaves what looks like a database; a broken archive leaves the directory as it was.
 */
export async function seedDataDir(dataDir: string, sources: SeedSources = defaultSeedSources()): Promise<Seeded> {
  if (dataDir.startsWith('memory://')) return {};
  const present = existsSync(dataDir) ? readdirSync(dataDir) : [];
  for (const leftover of present.filter((e) => e.startsWith(STAGING_PREFIX)))
    rmSync(path.join(dataDir, leftover), { recursive: true, force: true });
  if (present.some((e) => !e.startsWith(STAGING_PREFIX) && e !== LOCK_FILE && e !== ADMIN_SOCKET_FILE)) return {};
  if (sources.templates) {
    const template = await initialisedTemplate(sources.templates);
    cpSync(template, dataDir, {
      recursive: true,
      filter: (src) => src === template || ![LOCK_FILE, READY].includes(path.relative(template, src)),
    });
    return { from: 'template' };
  }
  const archive = sources.archives ? path.join(sources.archives, archiveName()) : undefined;
  if (!archive || !existsSync(archive)) return {};
  const staging = path.join(dataDir, `${STAGING_PREFIX}${process.pid}`);
  try {
    // node-tar loads only here, for a first start: a reopened database never needs it.
    const { unpackArchive } = await import('./pglite-archive.js');
    await unpackArchive(archive, staging);
    const entries = readdirSync(staging);
    if (!entries.includes('PG_VERSION')) throw new Error('no PG_VERSION in it');
    for (const entry of [...entries.filter((e) => e !== 'PG_VERSION'), 'PG_VERSION'])
      renameSync(path.join(staging, entry), path.join(dataDir, entry));
    return { from: 'archive' };
  } catch (e) {
    // Whatever was moved in already goes too: PG_VERSION is last, so no half-seeded database remains.
    for (const entry of readdirSync(dataDir))
      if (entry !== LOCK_FILE && entry !== ADMIN_SOCKET_FILE) rmSync(path.join(dataDir, entry), REMOVE);
    return { problem: `${archive}: ${(e as Error).message}` };
  } finally {
    rmSync(staging, REMOVE);
  }
}
