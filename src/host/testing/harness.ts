// Test harness: a real host (embedded PGlite, temp vault, real HTTP) started the way operators
// start it, plus SDK clients connected the way MCP clients connect. PGlite starts from a migrated
// template data directory so each test file pays ~0.5 s instead of a fresh initdb.
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
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createApiKey } from '../auth/api-keys.js';
import { migrate, migrateHost, openDatabase } from '../db/index.js';
import { TEMPLATES_ENV } from '../db/engines/pglite-template.js';
import { builtinSources, importFamily } from '../families/discover.js';
import type { FamilyMigration } from '../../sdk/types.js';
import { Host, type HostOptions } from '../host.js';
import { sharedClientValidator } from './client-validator.js';
import { freePort } from './free-port.js';
import { createLogger } from '../log/logger.js';
import { deepMerge, loadSettings } from '../settings/load.js';
import { panelSurface } from '../../panel/surface.js';

/** This package's root (the checkout, or an installed node_modules/exocortex), run from src or from dist. */
function packageRoot(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'exocortex')
      return dir;
    if (path.dirname(dir) === dir) throw new Error('the exocortex package root was not found above the test harness');
  }
}

const ROOT = packageRoot();

export interface TestServerOptions {
  /** Raw config merged into the generated config file (families, plugins, family sections…). */
  readonly config?: Record<string, unknown>;
  /** Files to put in the vault before start (path → content). */
  readonly files?: Record<string, string | Uint8Array>;
  /** A folder (e.g. a corpus vault) copied into the temp vault before start. */
  readonly copyVaultFrom?: string;
  readonly http?: boolean;
  /** Built-in families folder; null = none (test only the families listed in plugins). */
  readonly builtinDir?: string | null;
  readonly logLevel?: string;
  /** Environment the settings are loaded with (EXO_ overrides); none by default. */
  readonly env?: Record<string, string>;
  /**
   * npm packages installed beside the config file, by name → package folder, as `npm install` of the
   * packed package would lay them out (the files its package.json lists are copied), so `plugins:` can
   * name them. `exocortex` itself is linked to this checkout for their `exocortex/sdk` imports.
   */
  readonly packages?: Record<string, string>;
  /**
   * Listen on a free loopback port chosen before start and make http://127.0.0.1:PORT the
   * server.publicUrl (the OAuth issuer must be known before the server listens).
   */
  readonly loopbackPublicUrl?: boolean;
  /** Test-only seams for the OAuth client metadata fetch. */
  readonly oauthFetchSeams?: HostOptions['oauthFetchSeams'];
}

export interface TestServer {
  readonly host: Host;
  readonly url: string;
  readonly dir: string;
  readonly vaultDir: string;
  readonly configFile: string;
  /** A readwrite API key and a read-only one. */
  readonly key: string;
  readonly readKey: string;
  connect(options?: { key?: string; name?: string }): Promise<Client>;
  /** Stop the host and start it again on the same vault, database and config (clients must reconnect). */
  restart(): Promise<void>;
  /** Rewrite the config file (merged over the original) and wait for the reload to apply. */
  rewriteConfig(raw: Record<string, unknown>): Promise<void>;
  close(): Promise<void>;
}

/** The built-in families that bring migrations, imported as the host would import them. */
async function builtinMigrations(): Promise<Array<{ name: string; migrations: Record<string, FamilyMigration> }>> {
  const out = [];
  for (const source of builtinSources()) {
    const family = await importFamily(source);
    if (family.migrations && Object.keys(family.migrations).length)
      out.push({ name: family.name, migrations: family.migrations });
  }
  return out;
}

/**
 * What a migrated template depends on: the host's migration files, the engine's version and each
 * built-in family's migrations (their code, so an edited migration makes a new template).
 */
function migrationsFingerprint(families: Awaited<ReturnType<typeof builtinMigrations>>): string {
  const h = createHash('sha256');
  const dir = path.join(ROOT, 'migrations');
  for (const f of readdirSync(dir).sort()) h.update(f).update(readFileSync(path.join(dir, f)));
  h.update(readFileSync(path.join(ROOT, 'node_modules/@electric-sql/pglite/package.json')));
  for (const { name, migrations } of families)
    for (const [step, m] of Object.entries(migrations)) h.update(`${name}/${step}\0${String(m.up)}\0${String(m.down)}`);
  return h.digest('hex').slice(0, 16);
}

/** Lay packages out under dir/node_modules the way installing their packed tarballs would. */
function installPackages(dir: string, packages: Record<string, string>): void {
  const modules = path.join(dir, 'node_modules');
  mkdirSync(modules, { recursive: true });
  writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: 'exocortex-test-install', private: true, type: 'module' }),
  );
  symlinkSync(ROOT, path.join(modules, 'exocortex'), 'dir');
  for (const [name, from] of Object.entries(packages)) {
    const manifest = JSON.parse(readFileSync(path.join(from, 'package.json'), 'utf8')) as { files?: string[] };
    const to = path.join(modules, name);
    mkdirSync(to, { recursive: true });
    cpSync(path.join(from, 'package.json'), path.join(to, 'package.json'));
    for (const entry of manifest.files ?? []) cpSync(path.join(from, entry), path.join(to, entry), { recursive: true });
  }
}

const MIGRATED = 'exocortex-pglite-template-';
const DAY_MS = 86_400_000;

/**
 * A migrated PGlite data dir, created once per migration set and copied per test, in the templates folder
 * the test loader names (EXOCORTEX_PGLITE_TEMPLATES, the checkout's .cache/pglite) or the temporary one. It
 * holds the built-in families' migrations too: each family's migrator costs a test server start ~0.5 s
 * otherwise. Making one removes the templates of other migration sets a day old.
 */
export async function pgliteTemplate(): Promise<string> {
  const families = await builtinMigrations();
  const dir = process.env[TEMPLATES_ENV] || os.tmpdir();
  const template = path.join(dir, `${MIGRATED}${migrationsFingerprint(families)}`);
  if (existsSync(path.join(template, 'READY'))) return template;
  mkdirSync(dir, { recursive: true });
  const staging = `${template}.${process.pid}.${Date.now()}`;
  const database = await openDatabase(`pglite:${staging}`, { baseDir: '/' });
  await migrateHost(database.db);
  for (const { name, migrations } of families) await migrate(database.db, `family_${name}`, migrations);
  await database.close();
  writeFileSync(path.join(staging, 'READY'), '');
  try {
    renameSync(staging, template);
  } catch {
    rmSync(staging, { recursive: true, force: true }); // another process won the race
    return template;
  }
  // Templates of other migration sets go once they are a day old: a run can hold two current ones at once
  // (the harness loaded from the sources and from dist/ hashes differently compiled migrations), and a
  // template removed while another process copies it fails that copy.
  for (const old of readdirSync(dir)) {
    const other = path.join(dir, old);
    if (
      old.startsWith(MIGRATED) &&
      !old.includes('.') &&
      other !== template &&
      Date.now() - statSync(other).mtimeMs > DAY_MS
    )
      rmSync(other, { recursive: true, force: true });
  }
  return template;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-test-'));
  const vaultDir = path.join(dir, 'vault');
  const dataDir = path.join(dir, 'db');
  mkdirSync(vaultDir, { recursive: true });
  if (options.copyVaultFrom) cpSync(options.copyVaultFrom, vaultDir, { recursive: true });
  for (const [p, content] of Object.entries(options.files ?? {})) {
    mkdirSync(path.dirname(path.join(vaultDir, p)), { recursive: true });
    writeFileSync(path.join(vaultDir, p), content);
  }
  cpSync(await pgliteTemplate(), dataDir, { recursive: true });
  if (options.packages) installPackages(dir, options.packages);
  const port = options.loopbackPublicUrl ? await freePort() : 0;
  const base = {
    vault: { path: vaultDir },
    server: {
      host: '127.0.0.1',
      port,
      ...(options.loopbackPublicUrl ? { publicUrl: `http://127.0.0.1:${port}` } : {}),
    },
    database: { url: `pglite:${dataDir}` },
    auth: { mintAdminKeyOnFirstStart: false },
    log: { level: options.logLevel ?? 'silent' },
  };
  const configFile = path.join(dir, 'config.yaml');
  let raw: Record<string, unknown> = deepMerge(base, options.config ?? {});
  writeFileSync(configFile, YAML.stringify(raw));
  const settings = loadSettings({ file: configFile, env: options.env ?? {}, cwd: dir });
  const builtinDir = options.builtinDir === null ? path.join(dir, 'no-builtins') : options.builtinDir;
  const startHost = () =>
    Host.start({
      settings,
      http: options.http ?? true,
      builtinDir,
      log: createLogger(options.logLevel ?? 'silent'),
      oauthFetchSeams: options.oauthFetchSeams,
      surfaces: [panelSurface],
    });
  let host = await startHost();
  const db = host.database.db;
  const key = (await createApiKey(db, { name: 'test-rw', scope: 'readwrite', vaultId: host.vaultHandle.id })).raw;
  const readKey = (await createApiKey(db, { name: 'test-ro', scope: 'read', vaultId: host.vaultHandle.id })).raw;
  const clients: Client[] = [];
  return {
    get host() {
      return host;
    },
    get url() {
      return host.url;
    },
    dir,
    vaultDir,
    configFile,
    key,
    readKey,
    async connect(o = {}) {
      const client = new Client(
        { name: o.name ?? 'exocortex-test', version: '1.0.0' },
        { jsonSchemaValidator: sharedClientValidator },
      );
      const transport = new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${o.key ?? key}` } },
      });
      await client.connect(transport);
      clients.push(client);
      return client;
    },
    async restart() {
      await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
      await host.close();
      host = await startHost();
    },
    async rewriteConfig(patch) {
      raw = { ...raw, ...patch };
      const version = host.manager.registry.version;
      const lastAt = host.manager.lastResult?.at;
      writeFileSync(configFile, YAML.stringify(raw));
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        if (host.manager.registry.version !== version || host.manager.lastResult?.at !== lastAt) return;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error('config reload did not happen within 10 s');
    },
    async close() {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
      await host.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
