// Where a database URL puts an embedded data directory. Apart from the engines so that `exocortex stdio`
// relaying to a running server and the admin channel's socket path never load PGlite or Kysely.
import { resolveFrom } from '../settings/paths.js';

/** The on-disk PGlite directory a URL names, or undefined (in-memory PGlite, a server). */
export function embeddedDir(url: string, baseDir: string): string | undefined {
  if (!url.startsWith('pglite:')) return undefined;
  const dir = pgliteDir(url, baseDir);
  return dir.startsWith('memory://') ? undefined : dir;
}

export function pgliteDir(url: string, baseDir: string): string {
  const rest = url.slice('pglite:'.length);
  return rest.startsWith('memory://') ? rest : resolveFrom(baseDir, rest);
}
