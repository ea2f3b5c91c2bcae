// The settings' file and environment, without their schema: which config file, its YAML read into a raw
// mapping, the EXO_ variable names, paths resolved against the base directory. Apart from load.ts (which
// validates against every section's zod schema) so that `exocortex stdio` relaying to a running server
// reads the few keys it needs without building the whole schema.

import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { PACKAGE_ROOT } from '../package-info.js';

export interface LoadOptions {
  readonly file?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Extra raw values merged over the file (tests). */
  readonly overrides?: Record<string, unknown>;
}

export class SettingsError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'SettingsError';
  }
}

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

/**
 * Which config file, and what its relative paths are resolved against. A file named by --config or
 * $EXO_CONFIG, and the bundled default in a git checkout (`npm start`), resolve against the working
 * directory, as they always did. An installed package (`npm i -g`, `npx`) is started from anywhere (a
 * client may start it in /): it reads the user's config when there is one, else the bundled default, and
 * resolves both against the user's data directory, so ./data/db and ./vault land in ~/.local/share/exocortex/.
 */
export function configLocation(
  options: Pick<LoadOptions, 'file' | 'cwd'>,
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

/** The last config text parsed, and what it parsed to (a text that failed to parse is never kept). */
let lastParse: { text: string; value: Record<string, unknown> } | undefined;

export function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new SettingsError([
      `config file ${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? e}); pass an existing file with --config`,
    ]);
  }
  // `exocortex stdio` reads its file twice at start (the relay's three keys, then every setting when it
  // serves itself): the second read of the same text is a copy of the first parse (~20 ms of the start).
  if (lastParse?.text === text) return structuredClone(lastParse.value);
  const doc = YAML.parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new SettingsError(doc.errors.map((e) => `${file}: YAML error: ${e.message.split('\n')[0]}`));
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (e) {
    throw new SettingsError([`${file}: ${(e as Error).message}`]);
  }
  if (typeof value !== 'object' || Array.isArray(value))
    throw new SettingsError([`${file}: the top level must be a mapping of settings`]);
  lastParse = { text, value: structuredClone(value) as Record<string, unknown> };
  return value as Record<string, unknown>;
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

export function parseEnvValue(value: string): unknown {
  const trimmed = value.trim();
  if (trimmed === '') return '';
  if (/^(true|false|null|-?\d+(\.\d+)?)$/.test(trimmed) || trimmed.startsWith('[') || trimmed.startsWith('{')) {
    try {
      return YAML.parse(trimmed);
    } catch {
      return value;
    }
  }
  return value;
}

export function setPath(target: Record<string, unknown>, p: readonly string[], value: unknown): void {
  let cur = target;
  for (const part of p.slice(0, -1)) {
    if (!cur[part] || typeof cur[part] !== 'object') cur[part] = {};
    cur = cur[part] as Record<string, unknown>;
  }
  cur[p[p.length - 1]] = value;
}

export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)
        ? deepMerge(b as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
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
