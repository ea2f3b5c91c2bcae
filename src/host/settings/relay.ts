// The settings `exocortex stdio` needs to find and check a running server before it relays to it: the
// config file and the EXO_ variables read as load.ts reads them, but only the four keys the relay uses
// (admin.socketPath, database.url, vault.path, and vault.name for a stdio served here), checked by hand rather than by their zod sections: a relay
// starts on every launch of a desktop client, and zod alone is ~90 ms of its start. The defaults are the
// sections' own (locations.ts). A relay never serves, so the rest of the file is the server's business;
// when no server runs, `exocortex stdio` loads and validates everything before serving itself.
import { adminSocketPath } from '../admin/protocol.js';
import { embeddedDir } from '../db/location.js';
import { type LoadOptions, parseEnvValue, readConfigFile, SettingsError } from './file.js';
import { configLocation, envName, resolveFrom } from './paths.js';
import {
  DATABASE_URL_PATTERN,
  DEFAULT_DATABASE_URL,
  DEFAULT_VAULT_NAME,
  DEFAULT_VAULT_PATH,
  VAULT_NAME_MAX_CHARS,
} from './locations.js';

export interface RelaySettings {
  readonly file: string;
  readonly baseDir: string;
  /** Where the running server's admin socket is; undefined for a server database without admin.socketPath. */
  readonly socketPath: string | undefined;
  /** The embedded database's directory (where its lock is), undefined for a server database. */
  readonly databaseDir: string | undefined;
  /** vault.path, resolved: the vault this stdio was asked for. */
  readonly vaultPath: string;
  /** vault.name: what a stdio server served here calls the vault in its instructions, before the rest loads. */
  readonly vaultName: string;
}

export function loadRelaySettings(options: Pick<LoadOptions, 'file' | 'cwd' | 'env'> = {}): RelaySettings {
  const env = options.env ?? process.env;
  const { file, baseDir } = configLocation(options, env);
  const raw = readConfigFile(file);
  const problems: string[] = [];
  const read = (section: string, key: string): unknown => {
    const set = env[`EXO_${envName([section, key])}`];
    if (set !== undefined) return parseEnvValue(set);
    const given = raw[section];
    if (given === undefined || given === null) return undefined;
    if (typeof given !== 'object' || Array.isArray(given)) {
      problems.push(`${section}: expected a mapping of settings`);
      return undefined;
    }
    return (given as Record<string, unknown>)[key];
  };
  const text = (section: string, key: string, fallback: string | null): string | null => {
    const value = read(section, key);
    if (value === undefined || (value === null && fallback === null)) return fallback;
    if (typeof value !== 'string' || value === '') {
      problems.push(`${section}.${key}: expected a non-empty string`);
      return fallback;
    }
    return value;
  };
  const url = text('database', 'url', DEFAULT_DATABASE_URL) as string;
  if (!DATABASE_URL_PATTERN.test(url))
    problems.push('database.url: must start with pglite:, postgres:// or postgresql://');
  else if (url === 'pglite:')
    problems.push('database.url "pglite:" names no directory: use pglite:./data/db or pglite:memory://');
  const socket = text('admin', 'socketPath', null);
  const vault = text('vault', 'path', DEFAULT_VAULT_PATH) as string;
  const vaultName = text('vault', 'name', DEFAULT_VAULT_NAME) as string;
  if (vaultName.length > VAULT_NAME_MAX_CHARS) problems.push(`vault.name: at most ${VAULT_NAME_MAX_CHARS} characters`);
  if (problems.length) throw new SettingsError(problems);
  return {
    file,
    baseDir,
    socketPath: adminSocketPath({ host: { admin: { socketPath: socket }, database: { url } }, baseDir }),
    databaseDir: embeddedDir(url, baseDir),
    vaultPath: resolveFrom(baseDir, vault),
    vaultName,
  };
}
