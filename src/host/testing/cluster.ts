// A real multi-process topology for tests and bench/replicas: N `exocortex serve` processes (spawned as
// an operator starts them) on one PostgreSQL server, each vault with a user and a key, and optionally
// HAProxy from Debian's packages balancing round-robin in front. Everything listens on loopback.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { sql } from 'kysely';
import { createApiKey } from '../auth/api-keys.js';
import { LOCK_SPACE } from '../cluster/leases.js';
import { openDatabase, type DatabaseService } from '../db/index.js';
import { sharedClientValidator } from './client-validator.js';
import { freePort } from './free-port.js';
import { cliArgs } from './cli.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const HAPROXY = '/usr/sbin/haproxy';

export function haproxyAvailable(): boolean {
  return existsSync(HAPROXY);
}

export interface ClusterProcess {
  readonly name: string;
  readonly port: number;
  readonly url: string;
  /** Its configuration file (an `exocortex` command run with it reaches this process's admin socket). */
  readonly config: string;
  child: ChildProcess;
  /** Start it again after a kill (same config, same port). */
  start(): Promise<void>;
  kill(signal: NodeJS.Signals): void;
  readonly exited: boolean;
}

export interface ClusterVault {
  readonly name: string;
  readonly id: number;
  readonly root: string;
  readonly key: string;
}

export interface TestCluster {
  readonly processes: ClusterProcess[];
  readonly vaults: ClusterVault[];
  /** The balancer's URL (HAProxy), when one was started. */
  readonly balancer?: string;
  readonly db: DatabaseService;
  /** An MCP client for a vault's key, through `base` (a process or the balancer). */
  connect(base: string, key: string, name?: string): Promise<Client>;
  /** How many vaults a process holds the lease of now. */
  ownedBy(p: ClusterProcess): Promise<number>;
  /** Which process owns a vault now (by its lease), or undefined. */
  ownerOf(vaultId: number): Promise<ClusterProcess | undefined>;
  /** Add a process with its own settings merged over the shared ones (a read-only deployment). */
  addProcess(name: string, overrides: Record<string, unknown>): Promise<ClusterProcess>;
  close(): Promise<void>;
}

export interface ClusterOptions {
  readonly dir: string;
  readonly databaseUrl: string;
  readonly processes: number;
  readonly vaults: number;
  /** Settings merged into every process's config. */
  readonly config?: Record<string, unknown>;
  readonly balancer?: boolean;
  /** Give each process its own admin socket (`<dir>/<name>.sock`), for the CLI and `exocortex stdio`. */
  readonly adminSockets?: boolean;
  /** The config names a family written in TypeScript (a test fixture): the processes run the sources. */
  readonly typescriptFamilies?: boolean;
}

export async function startCluster(o: ClusterOptions): Promise<TestCluster> {
  const vaultDefs = Array.from({ length: o.vaults }, (_, i) => {
    const name = `v${String(i + 1).padStart(2, '0')}`;
    const root = path.join(o.dir, 'vaults', name);
    mkdirSync(root, { recursive: true });
    return { name, root };
  });
  const operatorRoot = path.join(o.dir, 'vaults', 'operator');
  mkdirSync(operatorRoot, { recursive: true });
  const shared = {
    vault: { path: operatorRoot },
    database: { url: o.databaseUrl, poolSize: 4 },
    server: { host: '127.0.0.1' },
    workers: { threads: 1 },
    log: { level: 'warn' },
    reload: { watchConfig: false },
    auth: { mintAdminKeyOnFirstStart: false, keyCacheSeconds: 2 },
    vaults: vaultDefs.map((v) => ({ name: v.name, path: v.root })),
    users: vaultDefs.map((v) => ({ name: `u-${v.name}`, vault: v.name })),
    ...o.config,
  };
  const processes: ClusterProcess[] = [];
  const makeProcess = async (name: string, overrides: Record<string, unknown> = {}) => {
    const port = await freePort();
    const config = path.join(o.dir, `${name}.yaml`);
    const server = { ...shared.server, ...(overrides.server as object), port };
    const admin = o.adminSockets ? { admin: { socketPath: path.join(o.dir, `${name}.sock`) } } : {};
    writeFileSync(config, YAML.stringify({ ...shared, ...admin, ...overrides, server }));
    const log = createWriteStream(path.join(o.dir, `${name}.log`), { flags: 'a' });
    const p: ClusterProcess & { exited: boolean } = {
      name,
      port,
      url: `http://127.0.0.1:${port}`,
      config,
      child: undefined as unknown as ChildProcess,
      exited: true,
      async start() {
        p.exited = false;
        p.child = spawn(
          process.execPath,
          [...cliArgs({ typescriptFamilies: o.typescriptFamilies }), 'serve', '--config', config],
          {
            cwd: ROOT,
            env: { ...process.env, EXO_CONFIG: '' },
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        p.child.stdout?.pipe(log, { end: false });
        p.child.stderr?.pipe(log, { end: false });
        p.child.once('exit', () => {
          p.exited = true;
        });
        await waitHealthy(p.url, () => p.exited).catch((e: Error) => {
          // The process's own words say why it did not serve (a refused configuration, a port taken).
          const said = readFileSync(path.join(o.dir, `${name}.log`), 'utf8').slice(-2000);
          throw new Error(`${e.message}\n${said}`);
        });
      },
      kill(signal) {
        p.child.kill(signal);
      },
    };
    return p;
  };
  // The first process migrates and applies the declared vaults and users; the rest start together.
  const first = await makeProcess('r1');
  await first.start();
  processes.push(first);
  const rest = await Promise.all(Array.from({ length: o.processes - 1 }, (_, i) => makeProcess(`r${i + 2}`)));
  await Promise.all(rest.map((p) => p.start()));
  processes.push(...rest);

  const db = await openDatabase(o.databaseUrl, { baseDir: o.dir, poolSize: 4, pgliteMaintenanceSeconds: 0 });
  const vaults: ClusterVault[] = [];
  for (const v of vaultDefs) {
    const row = await db.db.selectFrom('vaults').select('id').where('name', '=', v.name).executeTakeFirstOrThrow();
    const user = await db.db
      .selectFrom('users')
      .select('id')
      .where('name', '=', `u-${v.name}`)
      .executeTakeFirstOrThrow();
    const { raw } = await createApiKey(db.db, {
      name: `key-${v.name}`,
      scope: 'readwrite',
      vaultId: row.id,
      userId: Number(user.id),
    });
    vaults.push({ name: v.name, id: row.id, root: v.root, key: raw });
  }

  let haproxy: ChildProcess | undefined;
  let balancer: string | undefined;
  if (o.balancer && haproxyAvailable()) {
    const port = await freePort();
    const cfg = path.join(o.dir, 'haproxy.cfg');
    writeFileSync(cfg, haproxyConfig(port, processes));
    const check = spawnSync(HAPROXY, ['-c', '-f', cfg]);
    if (check.status !== 0) throw new Error(`haproxy config refused: ${check.stderr}`);
    haproxy = spawn(HAPROXY, ['-db', '-f', cfg], { stdio: 'ignore' });
    balancer = `http://127.0.0.1:${port}`;
    await waitHealthy(balancer, () => haproxy!.exitCode !== null);
  }

  const clients: Client[] = [];
  return {
    processes,
    vaults,
    balancer,
    db,
    async connect(base, key, name = 'cluster-test') {
      const client = new Client({ name, version: '1.0.0' }, { jsonSchemaValidator: sharedClientValidator });
      const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      });
      await client.connect(transport);
      clients.push(client);
      return client;
    },
    async ownedBy(p) {
      const r = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM vault_leases l
        JOIN cluster_processes c ON c.id = l.owner AND c.internal_url = ${p.url}
        JOIN pg_locks k ON k.locktype = 'advisory' AND k.granted AND k.objsubid = 2
          AND k.classid = ${LOCK_SPACE}::oid AND k.objid = l.vault_id::oid`.execute(db.db);
      return r.rows[0].n;
    },
    async ownerOf(vaultId) {
      const row = await db.db
        .selectFrom('vault_leases')
        .innerJoin('cluster_processes', 'cluster_processes.id', 'vault_leases.owner')
        .select(['cluster_processes.internal_url as url'])
        .where('vault_leases.vault_id', '=', vaultId)
        .executeTakeFirst();
      return processes.find((p) => p.url === row?.url && !p.exited);
    },
    async addProcess(name, overrides) {
      const p = await makeProcess(name, overrides);
      await p.start();
      processes.push(p);
      return p;
    },
    async close() {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
      haproxy?.kill('SIGKILL');
      for (const p of processes) if (!p.exited) p.kill('SIGTERM');
      await Promise.all(
        processes.map(
          (p) =>
            new Promise<void>((resolve) => {
              if (p.exited) return resolve();
              const timer = setTimeout(() => {
                p.kill('SIGKILL');
                resolve();
              }, 5000);
              p.child.once('exit', () => {
                clearTimeout(timer);
                resolve();
              });
            }),
        ),
      );
      await db.close();
    },
  };
}

/**
 * deploy/haproxy.cfg made to run here: bound to a loopback port, TLS off, its servers replaced by these
 * processes (both backends), health checks sent with a Host the processes allow. The example is the
 * configuration the tests run, so it cannot drift from one that works.
 */
function haproxyConfig(port: number, processes: readonly ClusterProcess[]): string {
  const example = readFileSync(path.join(ROOT, 'deploy/haproxy.cfg'), 'utf8');
  const servers = processes.map((p) => `  server ${p.name} 127.0.0.1:${p.port} check inter 1s fall 3 rise 1`);
  const out: string[] = [];
  let replaced = false;
  for (const line of example.split('\n')) {
    if (/^\s*bind /.test(line)) out.push(`  bind 127.0.0.1:${port}`);
    else if (/^\s*server /.test(line)) {
      if (!replaced) out.push(...servers);
      replaced = true;
    } else {
      if (/^backend /.test(line)) replaced = false;
      out.push(line.replace(/hdr Host \S+/, 'hdr Host 127.0.0.1'));
    }
  }
  return out.join('\n');
}

/** Wait until GET /health answers (any status: the process is listening), or the process exits. */
async function waitHealthy(base: string, exited: () => boolean, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited()) throw new Error(`${base}: the process exited before it served`);
    try {
      const res = await fetch(`${base}/health`);
      await res.body?.cancel();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${base}: not healthy within ${timeoutMs} ms`);
}
