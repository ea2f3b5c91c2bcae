// The commands that run a server or a pass over it: serve (HTTP, with the operator panel), stdio (served
// here, or bridged to the running server), migrate and index.
import module from 'node:module';
import type { Host } from '../host/host.js';
import type { AdminClient } from '../host/admin/channel-client.js';
import type { IndexSummary, Progress } from '../host/admin/operations.js';
import type { Settings } from '../host/settings/load.js';
import type { RelaySettings } from '../host/settings/relay.js';
import { requireNative } from './exit.js';
import {
  loadHost,
  loadKeys,
  loadLogger,
  loadOps,
  openEngineEarly,
  OWNER_WAIT_MS,
  reachOwner,
  refuseOnServerDatabase,
} from './owner.js';

export function claudeAddCommand(url: string, key: string): string {
  return `claude mcp add --transport http exocortex ${url}/mcp --header "Authorization: Bearer ${key}"`;
}

/** `configFile`: the --config given, if any (the relay card is keyed by what `exocortex stdio` is given). */
export async function runServe(settings: Settings, configFile?: string): Promise<void> {
  const Host = await loadHost();
  const { mintFirstAdminKey } = await loadKeys();
  const { panelSurface } = await import('../panel/surface.js');
  const host = await Host.start({ settings, http: true, command: 'exocortex serve', surfaces: [panelSurface] });
  const s = settings.host.server;
  const base = s.publicUrl?.replace(/\/$/, '') ?? host.url;
  const raw = settings.host.auth.mintAdminKeyOnFirstStart
    ? await mintFirstAdminKey(host.database.db, host.vaultHandle.id)
    : undefined;
  if (raw) {
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
  // This config's relay card (relay-card.ts), so that even the first `exocortex stdio` beside this server
  // finds it without reading YAML. Best effort: a card is only a cache, keyed by everything it derives from.
  void import('../host/settings/relay-card.js')
    .then((m) => m.relaySettings({ file: configFile }))
    .catch(() => undefined);
}

/**
 * stdio: bridged to the running server when one owns the database, else served here (holding the lock,
 * and opening the admin channel so that CLI commands and other bridges reach this process). Served here,
 * initialize is answered at once and tool calls wait until the host is up. The relay reads only the settings
 * that find the server (settings/relay.ts, or their card: relay-card.ts), so it loads neither PGlite nor the
 * families nor the whole settings schema. Served here, every setting is loaded and validated after the
 * client's first answer, with the host: a config the schema refuses ends the process with its refusal
 * (status 2), as a host that fails to start does. `relay`: the relay settings main.ts has already read.
 */
export async function runStdio(configFile: string | undefined, relay?: RelaySettings): Promise<void> {
  const [{ relayStdio }, { isLocked }, { relaySettings }] = await Promise.all([
    import('./stdio-relay.js'),
    import('../host/db/owner-lock.js'),
    import('../host/settings/relay-card.js'),
  ]);
  const found = relay ?? (await relaySettings({ file: configFile }));
  const deadline = Date.now() + OWNER_WAIT_MS;
  for (;;) {
    if (found.socketPath && (await relayStdio(found.socketPath, found.vaultPath))) return;
    if (!found.databaseDir || !(await isLocked(found.databaseDir))) break;
    if (Date.now() > deadline) break; // serving directly now fails with the owner named
    await new Promise((r) => setTimeout(r, 250));
  }
  requireNative();
  const [{ createLazyMcpServer }, { serveStdio }] = await Promise.all([
    import('../host/mcp/server-factory.js'),
    import('../host/mcp/sdk.js'),
  ]);
  // The host's modules (a few hundred ms of compiling on the thread that reads stdin) load once the client's
  // first message has been answered, so a desktop client's initialize never waits for them; tool calls wait
  // for the host as before. Without a first message within 100 ms they load anyway.
  let startHost = () => {};
  const firstAnswered = new Promise<void>((resolve) => {
    startHost = resolve;
    setTimeout(resolve, 100);
  });
  const hostReady = firstAnswered.then(async () => {
    // What answering initialize compiled goes to Node's compile cache now (Node 22.10+; main.ts turned
    // it on), not only at a clean exit: a desktop client often ends its server with a signal.
    (module as { flushCompileCache?: () => void }).flushCompileCache?.();
    const settings = (await import('../host/settings/load.js')).loadSettings({ file: configFile });
    refuseOnServerDatabase(settings, 'exocortex stdio');
    const log = (await loadLogger())(settings.host.log.level);
    const engine = openEngineEarly(settings, log);
    const Host = await loadHost();
    return Host.start({ settings, log, engine, http: false, command: 'exocortex stdio' });
  });
  const source = hostReady.then((host) => ({ principal: host.operator, deps: host.serverDeps }));
  source.catch(() => undefined);
  // The SDK decides the era from the client's first message (server/discover or initialize) and pins one
  // instance for the connection; the newest instance is the one serving, so it is the one told of changes.
  serveStdio(() => {
    const server = createLazyMcpServer(source, found.vaultName, { notifications: true });
    void hostReady.then(
      (host) =>
        host.hub.add('stdio', { server, credentialId: 'operator', lastSeen: Date.now(), close: () => server.close() }),
      () => undefined,
    );
    return server;
  });
  // Attached after the transport's own reader, so the first chunk is handled (and answered, its handler
  // being synchronous up to the write) before the immediate that starts the host.
  process.stdin.once('data', () => setImmediate(startHost));
  let host: Host;
  try {
    host = await hostReady;
  } catch (e) {
    // A settings refusal, a locked database, a host that failed to start: one line, status 2.
    process.stderr.write(`exocortex: ${(e as Error).message}\n`);
    process.exit(2);
  }
  // The client closing stdin ends the process, also when it closed while the host was starting (a client
  // that gave up, or sent its requests and left): the input's end was before this listener, and without
  // this check the process would serve nobody, holding the database, until killed.
  const closeOnEnd = () => void host.close().then(() => process.exit(0));
  if (process.stdin.readableEnded) closeOnEnd();
  else process.stdin.on('end', closeOnEnd);
  installShutdown(host);
}

export async function runMigrate(settings: Settings): Promise<void> {
  const remote = async (owner: AdminClient) => {
    const health = await owner.get<{ families?: Record<string, string> }>('/v1/health');
    const states = Object.entries(health.families ?? {})
      .map(([n, st]) => `${n}: ${st}`)
      .join(', ');
    process.stderr.write(
      `the running server (PID ${owner.hello.pid}) applied migrations when it started (host and enabled families: ${states || 'none'})\n`,
    );
  };
  await reachOwner(settings, remote, () => migrateHere(settings));
}

async function migrateHere(settings: Settings): Promise<void> {
  const [Host, createLogger] = await Promise.all([loadHost(), loadLogger()]);
  const host = await Host.start({ settings, http: false, admin: false, log: createLogger('warn') });
  const states = [...host.manager.registry.status].map(([n, s]) => `${n}: ${s.state}`).join(', ');
  await host.close();
  process.stderr.write(`migrations applied (host and enabled families: ${states || 'none'})\n`);
}

/** `exocortex index`: one full pass (catch-up, or every note with --rebuild) with a progress bar, then a summary. */
export async function runIndex(settings: Settings, opts: { rebuild?: boolean; vault?: string }): Promise<void> {
  const [{ default: cliProgress }, { renderIndexSummary }] = await Promise.all([import('cli-progress'), loadOps()]);
  const bar = new cliProgress.SingleBar(
    { stream: process.stderr, format: 'indexing [{bar}] {value}/{total} notes | {duration}s', hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  const onProgress = (p: Progress) => {
    if (!started) {
      bar.start(p.total, p.done);
      started = true;
    }
    bar.setTotal(p.total);
    bar.update(p.done);
  };
  const rebuild = opts.rebuild === true;
  const vault = opts.vault;
  const remote = (owner: AdminClient) =>
    owner
      .stream<{ summary: IndexSummary }>(
        '/v1/index',
        { rebuild, ...(vault !== undefined ? { vault } : {}) },
        (e) => e.progress && onProgress(e.progress as Progress),
      )
      .then((r) => r.summary);
  const local = async () => {
    refuseOnServerDatabase(settings, 'exocortex index');
    const [Host, createLogger, { indexOp }] = await Promise.all([loadHost(), loadLogger(), loadOps()]);
    const once: Settings = {
      ...settings,
      host: { ...settings.host, index: { ...settings.host.index, watch: false, reconcileSeconds: 0 } },
    };
    const host = await Host.start({
      settings: once,
      http: false,
      log: createLogger('warn'),
      command: 'exocortex index',
    });
    try {
      return await indexOp(host.operations, { rebuild, vault }, onProgress);
    } finally {
      await host.close();
    }
  };
  try {
    const summary = await reachOwner(settings, remote, local);
    if (started) bar.stop();
    process.stderr.write(renderIndexSummary(summary) + '\n');
  } finally {
    if (started) bar.stop();
  }
}

export function installShutdown(host: Host): void {
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
