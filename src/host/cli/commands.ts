// CLI command bodies. Each opens what it needs (host, or just the database) and closes it. Heavy
// modules are imported lazily so that `exocortex stdio` can answer initialize before they load.
import type { Host } from '../host.js';
import type { DatabaseService } from '../db/index.js';
import { resolvePath, type Settings } from '../settings/load.js';
import type { Scope } from '../../sdk/types.js';

const loadHost = () => import('../host.js').then((m) => m.Host);
const loadKeys = () => import('../auth/api-keys.js');
const loadLogger = () => import('../log/logger.js').then((m) => m.createLogger);

async function withDatabase<T>(settings: Settings, fn: (db: DatabaseService, vaultId: number) => Promise<T>): Promise<T> {
  const { migrateHost, openDatabase } = await import('../db/index.js');
  const { ensureVault } = await import('../auth/vaults.js');
  const database = await openDatabase(settings.host.database.url, { baseDir: settings.baseDir, poolSize: 2, pgliteThread: settings.host.database.pgliteThread });
  try {
    await migrateHost(database.db);
    const vaultId = await ensureVault(database.db, settings.host.vault.name, resolvePath(settings, settings.host.vault.path));
    return await fn(database, vaultId);
  } finally {
    await database.close();
  }
}

export function claudeAddCommand(url: string, key: string): string {
  return `claude mcp add --transport http exocortex ${url}/mcp --header "Authorization: Bearer ${key}"`;
}

export async function runServe(settings: Settings): Promise<void> {
  const Host = await loadHost();
  const { countActiveKeys, createApiKey } = await loadKeys();
  const host = await Host.start({ settings, http: true });
  const s = settings.host.server;
  const base = s.publicUrl?.replace(/\/$/, '') ?? host.url;
  if (settings.host.auth.mintAdminKeyOnFirstStart && (await countActiveKeys(host.database.db)) === 0) {
    const { raw } = await createApiKey(host.database.db, { name: 'admin', scope: 'readwrite', vaultId: host.vaultHandle.id, isAdmin: true });
    process.stdout.write(
      [
        '',
        'First start: minted an admin API key. It is shown only this once; store it now.',
        `  ${raw}`,
        'Connect Claude Code with:',
        `  ${claudeAddCommand(base, raw)}`,
        '',
      ].join('\n') + '\n',
    );
  }
  host.log.info({ url: `${base}/mcp`, vault: host.vaultHandle.name }, 'serving');
  installShutdown(host);
}

/** stdio answers initialize at once; tool calls wait until the host (database, families) is up. */
export async function runStdio(settings: Settings): Promise<void> {
  const [{ createLazyMcpServer }, { StdioServerTransport }] = await Promise.all([import('../mcp/server-factory.js'), import('@modelcontextprotocol/sdk/server/stdio.js')]);
  const hostReady = loadHost().then((Host) => Host.start({ settings, http: false }));
  const source = hostReady.then((host) => ({ principal: host.operator, deps: host.serverDeps }));
  source.catch(() => undefined);
  const server = createLazyMcpServer(source, settings.host.vault.name);
  const transport = new StdioServerTransport();
  await server.connect(transport);
  let host: Host;
  try {
    host = await hostReady;
  } catch (e) {
    process.stderr.write(`exocortex: ${(e as Error).message}\n`);
    process.exit(2);
  }
  host.hub.add('stdio', { server, credentialId: 'operator', lastSeen: Date.now(), close: () => server.close() });
  transport.onclose = () => host.hub.delete('stdio');
  process.stdin.on('end', () => void host.close().then(() => process.exit(0)));
  installShutdown(host);
}

export async function runMigrate(settings: Settings): Promise<void> {
  const [Host, createLogger] = await Promise.all([loadHost(), loadLogger()]);
  const host = await Host.start({ settings, http: false, log: createLogger('warn') });
  const states = [...host.manager.registry.status].map(([n, s]) => `${n}: ${s.state}`).join(', ');
  await host.close();
  process.stderr.write(`migrations applied (host and enabled families: ${states || 'none'})\n`);
}

/** `exocortex index`: one full pass (catch-up, or every note with --rebuild) with a progress bar, then a summary. */
export async function runIndex(settings: Settings, opts: { rebuild?: boolean }): Promise<void> {
  const [Host, createLogger, { default: cliProgress }] = await Promise.all([loadHost(), loadLogger(), import('cli-progress')]);
  const once: Settings = { ...settings, host: { ...settings.host, index: { ...settings.host.index, watch: false, reconcileSeconds: 0 } } };
  const host = await Host.start({ settings: once, http: false, log: createLogger('warn') });
  try {
    const index = host.index!;
    const start = { ...index.state.counters };
    const t0 = Date.now();
    const bar = new cliProgress.SingleBar({ stream: process.stderr, format: 'indexing [{bar}] {value}/{total} notes | {duration}s', hideCursor: true }, cliProgress.Presets.shades_classic);
    bar.start(1, 0);
    const tick = () => {
      const done = index.state.counters.processed - start.processed;
      const st = index.status();
      bar.setTotal(Math.max(1, done + st.pending, opts.rebuild ? st.scanned : 0));
      bar.update(done);
    };
    const timer = setInterval(tick, 100);
    await index.whenReady(host.vaultHandle.id, 24 * 3600_000);
    if (opts.rebuild) await index.runPass({ force: true });
    while (Object.values(index.status().backlog).some((n) => n > 0)) await new Promise((r) => setTimeout(r, 200));
    clearInterval(timer);
    tick();
    bar.stop();
    const c = index.state.counters;
    const st = index.status();
    const secs = (Date.now() - t0) / 1000;
    const done = c.processed - start.processed;
    const lines = [
      `scanned ${st.scanned} notes in ${secs.toFixed(1)} s (${Math.round(done / Math.max(secs, 0.001))} notes/s)`,
      `indexed ${st.indexed}: ${c.upserted - start.upserted} written, ${c.renamed - start.renamed} renamed, ${c.removed - start.removed} removed, ${c.unchanged - start.unchanged} unchanged`,
      `quarantined ${st.quarantined}${st.failures ? `, ${st.failures} failures (last: ${st.lastError})` : ''}`,
      ...[...index.state.quarantine].slice(0, 20).map(([p, q]) => `  ${p}: ${q.reason}`),
    ];
    if (st.quarantined > 20) lines.push(`  … and ${st.quarantined - 20} more`);
    process.stderr.write(lines.join('\n') + '\n');
  } finally {
    await host.close();
  }
}

export async function keysCreate(settings: Settings, opts: { name: string; scope: Scope; expires?: string }): Promise<void> {
  const { createApiKey, parseExpiry } = await loadKeys();
  const expiresAt = opts.expires ? parseExpiry(opts.expires) : null;
  await withDatabase(settings, async (database, vaultId) => {
    const { raw, record } = await createApiKey(database.db, { name: opts.name, scope: opts.scope, vaultId, expiresAt });
    process.stdout.write(`${raw}\n`);
    process.stderr.write(`created key ${record.name} (${record.scope}${expiresAt ? `, expires ${expiresAt.toISOString()}` : ''}), id ${record.id}\n`);
  });
}

export async function keysList(settings: Settings): Promise<void> {
  const { listApiKeys } = await loadKeys();
  await withDatabase(settings, async (database) => {
    const rows = await listApiKeys(database.db);
    const lines = rows.map((k) => {
      const state = k.revokedAt ? 'revoked' : k.expiresAt && k.expiresAt.getTime() <= Date.now() ? 'expired' : 'active';
      return [k.id, k.name, k.prefix + '…', k.scope, state, k.expiresAt?.toISOString() ?? '-', k.lastUsedAt?.toISOString() ?? 'never'].join('\t');
    });
    process.stdout.write(['id\tname\tprefix\tscope\tstate\texpires\tlast used', ...lines].join('\n') + '\n');
  });
}

export async function keysRevoke(settings: Settings, which: string): Promise<void> {
  const { revokeApiKey } = await loadKeys();
  await withDatabase(settings, async (database) => {
    const n = await revokeApiKey(database.db, which);
    if (n === 0) {
      process.stderr.write(`no active key matches "${which}" (id, name or prefix); see exocortex keys list\n`);
      process.exitCode = 1;
    } else process.stderr.write(`revoked ${n} key${n > 1 ? 's' : ''}\n`);
  });
}

function installShutdown(host: Host): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    host.log.info({ signal }, 'shutting down');
    void host.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
