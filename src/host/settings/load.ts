// Loads settings: config file (YAML) → environment overrides (EXO_*) → zod validation. Refusals name
// the key and the fix. Family sections are passed through raw for the loader to validate.

import type { z } from 'zod';
import { HOST_KEYS, hostSettingsSchema, type HostSettings } from './schema.js';
import { deepMerge, type LoadOptions, parseEnvValue, readConfigFile, SettingsError, setPath } from './file.js';
import { configLocation, envName } from './paths.js';

export {
  deepMerge,
  type LoadOptions,
  parseEnvValue,
  readConfigFile,
  SettingsError,
  setPath,
} from './file.js';
export {
  configLocation,
  DEFAULT_CONFIG_FILE,
  envName,
  resolveFrom,
  resolvePath,
  userConfigFile,
  userDataDir,
} from './paths.js';

export interface Settings {
  readonly host: HostSettings;
  /** Raw top-level sections the host does not own, keyed by section name (claimed by families). */
  readonly sections: Readonly<Record<string, unknown>>;
  /** The config file these settings came from (watched for hot reload), if any. */
  readonly file: string | undefined;
  /** Directory relative paths in the settings are resolved against. */
  readonly baseDir: string;
  /**
   * EXO_ variables that name no host setting, left for the family loader: it knows each family's settings
   * schema, applies those that name one, and refuses the rest by name.
   */
  readonly familyEnv: Readonly<Record<string, string>>;
}

export function loadSettings(options: LoadOptions = {}): Settings {
  const env = options.env ?? process.env;
  const { file, baseDir } = configLocation(options, env);
  const raw = readConfigFile(file);
  const merged = deepMerge(raw, options.overrides ?? {});
  const familyEnv = applyEnvOverrides(merged, env);
  return { ...parseSettings(merged, { file, baseDir }), familyEnv };
}

export function parseSettings(
  raw: Record<string, unknown>,
  where: { file: string | undefined; baseDir: string },
): Settings {
  const hostRaw: Record<string, unknown> = {};
  const sections: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) (HOST_KEYS.has(k) ? hostRaw : sections)[k] = v;
  const parsed = hostSettingsSchema.safeParse(hostRaw);
  if (!parsed.success) throw new SettingsError(describeZodIssues(parsed.error));
  const host = parsed.data;
  const problems = crossChecks(host);
  if (problems.length) throw new SettingsError(problems);
  return { host, sections, file: where.file, baseDir: where.baseDir, familyEnv: {} };
}

/** https, or http to a loopback address (a local test or a client on the same machine). */
export function isSecureOrLoopback(url: string): boolean {
  const u = new URL(url);
  if (u.protocol === 'https:') return true;
  return u.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(u.hostname);
}

function crossChecks(s: HostSettings): string[] {
  const out: string[] = [];
  const loopback = ['127.0.0.1', '::1', 'localhost'].includes(s.server.host);
  if (!loopback && !s.server.publicUrl) {
    out.push(
      `server.host is ${s.server.host} (reachable from other machines) but server.publicUrl is not set: set server.publicUrl to the https:// address clients use`,
    );
  }
  if (s.oauth.enabled && s.server.publicUrl && !isSecureOrLoopback(s.server.publicUrl)) {
    out.push(
      `server.publicUrl is ${s.server.publicUrl}, but the OAuth authorization server (oauth.enabled) is offered only over https (or a loopback address): set server.publicUrl to the https:// address clients use, or oauth.enabled: false`,
    );
  }
  if (s.oauth.enabled && s.server.publicUrl && new URL(s.server.publicUrl).pathname.replace(/\/+$/, '') !== '') {
    out.push(
      `server.publicUrl is ${s.server.publicUrl}, but the OAuth authorization server (oauth.enabled) needs an origin without a path (https://host[:port]); serve Exocortex at the root of its own host name`,
    );
  }
  if (s.database.url.startsWith('pglite:') && s.database.url.length <= 'pglite:'.length) {
    out.push('database.url "pglite:" names no directory: use pglite:./data/db or pglite:memory://');
  }
  return out;
}

export function describeZodIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const key = issue.path.join('.') || '(top level)';
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.map((k) => (key === '(top level)' ? k : `${key}.${k}`));
      return `unknown key ${keys.join(', ')}: remove it or check its spelling (every setting: docs/configuration.md)`;
    }
    return `${key}: ${issue.message}; fix the value in the config file or the EXO_${envName(issue.path.map(String))} variable`;
  });
}

// --- environment overrides -------------------------------------------------------------------------

/**
 * Apply EXO_<PATH_IN_UPPER_SNAKE> variables onto the raw settings. A name under a host section that names
 * no host setting is refused here; any other unknown name is returned for the family loader to place.
 */
export function applyEnvOverrides(target: Record<string, unknown>, env: NodeJS.ProcessEnv): Record<string, string> {
  const known = new Map<string, string[]>();
  collectLeafPaths(hostDefaults(), [], known);
  const familyNames = new Set<string>(Object.keys((target.families as object) ?? {}));
  for (const key of Object.keys(env)) {
    const m = /^EXO_FAMILIES_([A-Z0-9_]+)_(ENABLED|READ_ONLY)$/.exec(key);
    if (m) familyNames.add(m[1].toLowerCase().replace(/_/g, '-'));
  }
  for (const name of familyNames) {
    known.set(envName(['families', name, 'enabled']), ['families', name, 'enabled']);
    known.set(envName(['families', name, 'readOnly']), ['families', name, 'readOnly']);
  }
  // Family sections present in the file can be overridden leaf by leaf too.
  for (const [section, value] of Object.entries(target)) {
    if (!HOST_KEYS.has(section) && value && typeof value === 'object')
      collectLeafPaths(value as Record<string, unknown>, [section], known);
  }
  const hostSections = new Set([...HOST_KEYS].map((k) => envName([k])));
  const problems: string[] = [];
  const leftover: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('EXO_') || name === 'EXO_CONFIG' || value === undefined) continue;
    const p = known.get(name.slice(4));
    if (p) setPath(target, p, parseEnvValue(value));
    else if ([...hostSections].some((h) => name.slice(4).startsWith(`${h}_`)))
      problems.push(
        `environment variable ${name} matches no setting: unset it or check its spelling (see docs/configuration.md)`,
      );
    else leftover[name] = value;
  }
  if (problems.length) throw new SettingsError(problems);
  return leftover;
}

function hostDefaults(): Record<string, unknown> {
  return hostSettingsSchema.parse({}) as unknown as Record<string, unknown>;
}

function collectLeafPaths(obj: Record<string, unknown>, prefix: string[], out: Map<string, string[]>): void {
  for (const [k, v] of Object.entries(obj)) {
    const p = [...prefix, k];
    if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length > 0)
      collectLeafPaths(v as Record<string, unknown>, p, out);
    else out.set(envName(p), p);
  }
}
