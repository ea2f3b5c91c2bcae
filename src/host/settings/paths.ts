// Where the settings come from, without reading them: which config file, what its relative paths resolve
// against, the EXO_ variables' names. No YAML and no schema here: `exocortex stdio` relaying through a card
// (relay-card.ts), the admin socket's location and the database directory's need only this.
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../package-info.js';

export const DEFAULT_CONFIG_FILE = path.join(PACKAGE_ROOT, 'config', 'default.yaml');

/** $XDG_CONFIG_HOME/exocortex/config.yaml: the file `exocortex init` writes and an installed server reads. */
export function userConfigFile(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(base, 'exocortex', 'config.yaml');
}

/** $XDG_DATA_HOME/exocortex: where an installed server keeps its database and, by default, its vault. */
export function userDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_DATA_HOME || path.join(os.homedir(), '.local', 'share');
  return path.join(base, 'exocortex');
}

/** $XDG_CACHE_HOME/exocortex: what may be deleted at any time (Node's compile cache, the relay's cards). */
export function userCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'exocortex');
}

/**
 * Which config file, and what its relative paths are resolved against. A file named by --config or
 * $EXO_CONFIG, and the bundled default in a git checkout (`npm start`), resolve against the working
 * directory, as they always did. An installed package (`npm i -g`, `npx`) is started from anywhere (a
 * client may start it in /): it reads the user's config when there is one, else the bundled default, and
 * resolves both against the user's data directory, so ./data/db and ./vault land in ~/.local/share/exocortex/.
 */
export function configLocation(
  options: { readonly file?: string; readonly cwd?: string },
  env: NodeJS.ProcessEnv,
): { file: string; baseDir: string } {
  const cwd = options.cwd ?? process.cwd();
  const named = options.file ?? env.EXO_CONFIG;
  if (named) return { file: named, baseDir: cwd };
  const user = userConfigFile(env);
  if (existsSync(user)) return { file: user, baseDir: userDataDir(env) };
  const checkout = existsSync(path.join(PACKAGE_ROOT, '.git'));
  return { file: DEFAULT_CONFIG_FILE, baseDir: checkout ? cwd : userDataDir(env) };
}

export function envName(pathParts: readonly string[]): string {
  return pathParts
    .map((p) =>
      p
        .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
        .replace(/-/g, '_')
        .toUpperCase(),
    )
    .join('_');
}

/** Resolve a settings path (vault.path, pglite dir) against the base directory. */
export function resolvePath(settings: { readonly baseDir: string }, p: string): string {
  return resolveFrom(settings.baseDir, p);
}

/** Resolve against a base directory, expanding a leading `~/` to the user's home. */
export function resolveFrom(baseDir: string, p: string): string {
  if (p === '~' || p.startsWith('~/')) return path.join(os.homedir(), p.slice(1));
  return path.resolve(baseDir, p);
}
