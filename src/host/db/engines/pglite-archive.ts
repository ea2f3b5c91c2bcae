// A PGlite data directory as one gzip'd tar file, so an initialised directory can ship inside the package:
// npm drops empty folders, and PostgreSQL needs its empty ones (pg_notify, pg_logical/snapshots…). The tar
// is node-tar's (npm's own). The reader takes folders and regular files only, inside its folder, and
// refuses anything else (links, devices, paths that leave it), a bad header or a cut file. Both run before
// a database opens (the build; a first start), never while serving. PGlite's own dumpDataDir/loadDataDir
// would do, but its loader holds the whole archive, the whole tar and every file at once: a first start's
// peak measured 445 MiB with it against ~336 streamed (issue 38).
import { mkdirSync, readdirSync } from 'node:fs';
import * as tar from 'tar';

/** Write `dir` (its folders, empty ones included, and files) as a gzip'd tar to `file`. */
export function packDirectory(dir: string, file: string, skip: (relative: string) => boolean = () => false): void {
  const top = readdirSync(dir)
    .filter((name) => !skip(name))
    .sort();
  tar.create(
    {
      sync: true,
      gzip: { level: 9 },
      file,
      cwd: dir,
      portable: true,
      filter: (entry) => !skip(entry.replace(/^\.\//, '')),
    },
    top,
  );
}

/**
 * Unpack an archive written by packDirectory into `into` (created); throws on an entry it did not write,
 * a truncated file or a bad gzip checksum. Streamed: it holds a 1 MiB chunk at a time, never the whole tar
 * (~40 MiB), which would stay resident until a garbage collection and raise the first start's peak.
 * Synchronous, so that when it throws nothing is still being written (the asynchronous extract rejects at
 * the first fault while files it opened are still landing, and the caller's cleanup raced them); it runs
 * on PGlite's thread, or before the database opens on the main one (~0.5 s, a first start only).
 */
export async function unpackArchive(file: string, into: string): Promise<void> {
  mkdirSync(into, { recursive: true });
  let refused: string | undefined;
  tar.extract({
    sync: true,
    maxReadSize: 1024 * 1024,
    file,
    cwd: into,
    strict: true,
    preservePaths: false,
    filter: (entryPath, entry) => {
      const type = 'type' in entry ? entry.type : undefined;
      if (type === 'File' || type === 'OldFile' || type === 'Directory') return true;
      refused ??= `archive entry of type ${JSON.stringify(type)}: ${entryPath}`;
      return false;
    },
    onwarn: (code, message) => {
      refused ??= `${code}: ${message}`;
    },
  });
  if (refused) throw new Error(refused);
}
