// The settings `exocortex stdio` needs to find and check a running server before it relays to it: the
// config file and the EXO_ variables read as load.ts reads them, but validated only for the three sections
// the relay uses (vault, database, admin). A relay never serves, so the rest of the file is the server's
// business; when no server runs, `exocortex stdio` loads and validates everything before serving itself.
import { adminSection } from './sections/admin.js';
import { databaseSection } from './sections/database.js';
import { vaultSection } from './sections/vault.js';
import type { HostSettings } from './schema.js';
import {
  configLocation,
  envName,
  type LoadOptions,
  parseEnvValue,
  readConfigFile,
  SettingsError,
  setPath,
} from './file.js';

const RELAY_SECTIONS = { vault: vaultSection, database: databaseSection, admin: adminSection } as const;

export interface RelaySettings {
  readonly host: Pick<HostSettings, keyof typeof RELAY_SECTIONS>;
  readonly file: string;
  readonly baseDir: string;
}

export function loadRelaySettings(options: Pick<LoadOptions, 'file' | 'cwd' | 'env'> = {}): RelaySettings {
  const env = options.env ?? process.env;
  const { file, baseDir } = configLocation(options, env);
  const raw = readConfigFile(file);
  const host: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, { schema }] of Object.entries(RELAY_SECTIONS)) {
    const given = raw[name] ?? {};
    const value = (typeof given === 'object' && !Array.isArray(given) ? structuredClone(given) : given) as Record<
      string,
      unknown
    >;
    if (value === given) {
      problems.push(`${name}: expected a mapping of settings`);
      continue;
    }
    for (const p of leafPaths(schema.parse({}) as Record<string, unknown>, [])) {
      const set = env[`EXO_${envName([name, ...p])}`];
      if (set !== undefined) setPath(value, p, parseEnvValue(set));
    }
    const parsed = schema.safeParse(value);
    if (parsed.success) host[name] = parsed.data;
    else for (const issue of parsed.error.issues) problems.push(`${[name, ...issue.path].join('.')}: ${issue.message}`);
  }
  if (problems.length) throw new SettingsError(problems);
  const settings = { host, file, baseDir } as unknown as RelaySettings;
  if (settings.host.database.url === 'pglite:')
    throw new SettingsError(['database.url "pglite:" names no directory: use pglite:./data/db or pglite:memory://']);
  return settings;
}

/** The paths of a section's settings (as load.ts names them for EXO_ variables: nested objects walked). */
function leafPaths(obj: Record<string, unknown>, prefix: string[]): string[][] {
  return Object.entries(obj).flatMap(([k, v]) =>
    v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length > 0
      ? leafPaths(v as Record<string, unknown>, [...prefix, k])
      : [[...prefix, k]],
  );
}
