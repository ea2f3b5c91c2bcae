// CLI command bodies. Every command that reads or changes server state goes to the process that owns the
// database when one runs (over its admin channel), and otherwise runs here holding the database lock:
// the same operation either way. Heavy modules load lazily so `exocortex stdio` answers at once.
import type { Host } from '../host/host.js';
import type { DatabaseService } from '../host/db/index.js';
import type { AdminClient } from '../host/admin/channel-client.js';
import type { IndexSummary, KeyRow, Progress } from '../host/admin/operations.js';
import type { AccountTarget, UserView, VaultView } from '../host/admin/account-operations.js';
import type { ClientView, GrantView } from '../host/admin/oauth-operations.js';
import { realpathSync } from 'node:fs';
import { DEFAULT_CONFIG_FILE, resolvePath, type Settings } from '../host/settings/load.js';
import { OperationError } from '../host/admin/errors.js';
import type { Scope } from '../sdk/scopes.js';

const loadHost = () => import('../host/host.js').then((m) => m.Host);
const loadKeys = () => import('../host/auth/api-keys.js');
const loadLogger = () => import('../host/log/logger.js').then((m) => m.createLogger);
const loadOps = () => import('../host/admin/operations.js');
const loadAccounts = () => import('../host/admin/account-operations.js');
const loadOAuth = () => import('../host/admin/oauth-operations.js');

/** How long a command waits for an owner that holds the lock but does not answer yet (it is starting). */
const OWNER_WAIT_MS = 30_000;

/**
 * Run `remote` against the owner of the database, or `local` here when nobody owns it. An owner that is
 * still starting (lock held, socket not yet bound) is waited for; after OWNER_WAIT_MS its lock error stands.
 */
/**
 * On a PostgreSQL server, vaults are indexed and served only by `exocortex serve` processes holding
 * their leases: a command that would index or serve here refuses, naming the fix, instead of becoming
 * one more indexer (the embedded database has one owner by its lock, so there it runs here).
 */
function refuseOnServerDatabase(settings: Settings, command: string): void {
  if (!/^postgres(?:ql)?:\/\//.test(settings.host.database.url)) return;
  throw new CliRefusal(
    `${command} found no running server to reach: with a PostgreSQL server, only \`exocortex serve\` processes index and serve vaults (each vault by the one holding its lease). Start one, and set admin.socketPath in both configurations so that ${command} reaches it${command === 'exocortex stdio' ? ', or connect the client over HTTP (/mcp)' : ''}.`,
  );
}

/** A command that cannot run as configured: its message is printed and the process exits 1. */
export class CliRefusal extends Error {
  readonly code = 'needs_running_server';
}

export async function reachOwner<T>(
  settings: Settings,
  remote: (owner: AdminClient) => Promise<T>,
  local: () => Promise<T>,
): Promise<T> {
  const [{ AdminClient }, { adminSocketPath }, { DatabaseLockedError }] = await Promise.all([
    import('../host/admin/channel-client.js'),
    import('../host/admin/protocol.js'),
    import('../host/db/owner-lock.js'),
  ]);
  const socket = adminSocketPath(settings);
  const deadline = Date.now() + OWNER_WAIT_MS;
  for (;;) {
    const owner = socket ? await AdminClient.connect(socket) : undefined;
    if (owner) {
      announceOwner(settings, owner);
      try {
        return await remote(owner);
      } finally {
        await owner.close();
      }
    }
    try {
      return await local();
    } catch (e) {
      if (!(e instanceof DatabaseLockedError) || Date.now() > deadline) throw e;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Say which running server a command attached to (issue 43: without --config the CLI reaches whatever
 * server owns ./data/db, which may serve another vault than the one the config names): when the config
 * was the default, and always when the server's vault differs from the config's.
 */
export function announceOwner(settings: Settings, owner: AdminClient): void {
  const wanted = resolvePath(settings, settings.host.vault.path);
  const serving = owner.hello.vaultPath;
  const explicit = settings.file !== undefined && settings.file !== DEFAULT_CONFIG_FILE;
  const differs = serving !== undefined && realPath(serving) !== realPath(wanted);
  if (explicit && !differs) return;
  const who = `the running server (PID ${owner.hello.pid}, vault "${owner.hello.vault}"${serving ? ` at ${serving}` : ''}) through ${owner.socketPath}`;
  process.stderr.write(
    differs
      ? `exocortex: warning: attached to ${who}, which serves another vault than this config's ${wanted}; the command acts on the server's vaults. Pass --config with the server's config file to be sure.\n`
      : `exocortex: no --config given (using ${DEFAULT_CONFIG_FILE}): attached to ${who}.\n`,
  );
}

function realPath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** The database as a server start would leave it (implicit operator, the config file's vaults and users), then fn. */
async function withDatabase<T>(
  settings: Settings,
  fn: (db: DatabaseService, vaultId: number) => Promise<T>,
): Promise<T> {
  const [
    { migrateHost, openDatabase, pgliteMemoryOf },
    { ensureVault },
    { ensureOperator },
    { applyDeclared, DeclaredConflict },
    { SettingsError },
  ] = await Promise.all([
    import('../host/db/index.js'),
    import('../host/auth/vaults.js'),
    import('../host/auth/users.js'),
    import('../host/vaults/declared.js'),
    import('../host/settings/load.js'),
  ]);
  const database = await openDatabase(settings.host.database.url, {
    baseDir: settings.baseDir,
    poolSize: 2,
    pgliteThread: settings.host.database.pgliteThread,
    pgliteMemory: pgliteMemoryOf(settings.host.database),
  });
  try {
    await migrateHost(database.db);
    const vaultId = await ensureVault(
      database.db,
      settings.host.vault.name,
      resolvePath(settings, settings.host.vault.path),
    );
    await ensureOperator(database.db, vaultId);
    try {
      await applyDeclared(database.db, settings.host, (p) => resolvePath(settings, p), {
        name: settings.host.vault.name,
        id: vaultId,
      });
    } catch (e) {
      throw e instanceof DeclaredConflict ? new SettingsError(e.problems) : e;
    }
    return await fn(database, vaultId);
  } finally {
    await database.close();
  }
}

/** A key command run on a bare database in this process (no server holds it, so no cache to clear). */
function withKeys<T>(
  settings: Settings,
  fn: (target: { db: DatabaseService['db']; vault: { id: number }; forgetKeys(): void }) => Promise<T>,
): Promise<T> {
  return withDatabase(settings, (database, vaultId) =>
    fn({ db: database.db, vault: { id: vaultId }, forgetKeys: () => undefined }),
  );
}

/** A user or vault command on a bare database in this process (no server: no pipelines to start or stop). */
function withAccounts<T>(settings: Settings, fn: (target: AccountTarget) => Promise<T>): Promise<T> {
  return withDatabase(settings, (database) => fn({ db: database.db, settings, forgetKeys: () => undefined }));
}

export function claudeAddCommand(url: string, key: string): string {
  return `claude mcp add --transport http exocortex ${url}/mcp --header "Authorization: Bearer ${key}"`;
}

export async function runServe(settings: Settings): Promise<void> {
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
}

/**
 * stdio: bridged to the running server when one owns the database, else served here (holding the lock,
 * and opening the admin channel so that CLI commands and other bridges reach this process). Served here,
 * initialize is answered at once and tool calls wait until the host is up.
 */
export async function runStdio(settings: Settings): Promise<void> {
  const [{ AdminClient }, { adminSocketPath }, { embeddedDir }, { isLocked }] = await Promise.all([
    import('../host/admin/channel-client.js'),
    import('../host/admin/protocol.js'),
    import('../host/db/location.js'),
    import('../host/db/owner-lock.js'),
  ]);
  const socket = adminSocketPath(settings);
  const dir = embeddedDir(settings.host.database.url, settings.baseDir);
  const deadline = Date.now() + OWNER_WAIT_MS;
  for (;;) {
    const owner = socket ? await AdminClient.connect(socket) : undefined;
    if (owner) {
      const { runStdioBridge, vaultMismatch } = await import('../host/mcp/stdio-bridge.js');
      // Relaying to a server that serves another vault would answer from the wrong notes, silently.
      const mismatch = vaultMismatch(resolvePath(settings, settings.host.vault.path), owner.hello);
      if (mismatch) {
        await owner.close();
        throw new OperationError('vault_mismatch', mismatch, 2);
      }
      return runStdioBridge(owner);
    }
    if (!dir || !(await isLocked(dir))) break;
    if (Date.now() > deadline) break; // serving directly now fails with the owner named
    await new Promise((r) => setTimeout(r, 250));
  }
  refuseOnServerDatabase(settings, 'exocortex stdio');
  const [{ createLazyMcpServer }, { serveStdio }] = await Promise.all([
    import('../host/mcp/server-factory.js'),
    import('@modelcontextprotocol/server/stdio'),
  ]);
  const hostReady = loadHost().then((Host) => Host.start({ settings, http: false, command: 'exocortex stdio' }));
  const source = hostReady.then((host) => ({ principal: host.operator, deps: host.serverDeps }));
  source.catch(() => undefined);
  // The SDK decides the era from the client's first message (server/discover or initialize) and pins one
  // instance for the connection; the newest instance is the one serving, so it is the one told of changes.
  serveStdio(() => {
    const server = createLazyMcpServer(source, settings.host.vault.name, { notifications: true });
    void hostReady.then(
      (host) =>
        host.hub.add('stdio', { server, credentialId: 'operator', lastSeen: Date.now(), close: () => server.close() }),
      () => undefined,
    );
    return server;
  });
  let host: Host;
  try {
    host = await hostReady;
  } catch (e) {
    process.stderr.write(`exocortex: ${(e as Error).message}\n`);
    process.exit(2);
  }
  process.stdin.on('end', () => void host.close().then(() => process.exit(0)));
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

export async function keysCreate(
  settings: Settings,
  opts: { name: string; scope: Scope; expires?: string; user?: string },
): Promise<void> {
  const { keysCreateOp } = await loadOps();
  const input = {
    name: opts.name,
    scope: opts.scope,
    expires: opts.expires,
    ...(opts.user ? { user: opts.user } : {}),
  };
  const { raw, key } = await reachOwner(
    settings,
    (owner) => owner.post<{ raw: string; key: KeyRow }>('/v1/keys', input),
    () => withKeys(settings, (t) => keysCreateOp(t, input)),
  );
  process.stdout.write(`${raw}\n`);
  process.stderr.write(
    `created key ${key.name} for user ${key.user ?? '-'} (${key.scope}${key.expiresAt ? `, expires ${key.expiresAt}` : ''}), id ${key.id}\n`,
  );
}

export async function keysList(settings: Settings): Promise<void> {
  const { keysListOp } = await loadOps();
  const keys = await reachOwner(
    settings,
    (owner) => owner.get<{ keys: KeyRow[] }>('/v1/keys').then((r) => r.keys),
    () => withKeys(settings, (t) => keysListOp(t)),
  );
  // The user goes last, so scripts reading the earlier columns keep working.
  const lines = keys.map((k) =>
    [k.id, k.name, k.prefix + '…', k.scope, k.state, k.expiresAt ?? '-', k.lastUsedAt ?? 'never', k.user ?? '-'].join(
      '\t',
    ),
  );
  process.stdout.write(['id\tname\tprefix\tscope\tstate\texpires\tlast used\tuser', ...lines].join('\n') + '\n');
}

export async function keysRevoke(settings: Settings, which: string): Promise<void> {
  const { keysRevokeOp } = await loadOps();
  const { revoked } = await reachOwner(
    settings,
    (owner) => owner.post<{ revoked: number }>('/v1/keys/revoke', { which }),
    () => withKeys(settings, (t) => keysRevokeOp(t, which)),
  );
  process.stderr.write(`revoked ${revoked} key${revoked > 1 ? 's' : ''}\n`);
}

export async function usersAdd(
  settings: Settings,
  opts: { name: string; vault: string; admin?: boolean; share?: boolean },
): Promise<void> {
  const { usersAddOp } = await loadAccounts();
  const input = { name: opts.name, vault: opts.vault, admin: opts.admin === true, share: opts.share === true };
  const user = await reachOwner(
    settings,
    (owner) => owner.post<{ user: UserView }>('/v1/users', input).then((r) => r.user),
    () => withAccounts(settings, (t) => usersAddOp(t, input)),
  );
  process.stderr.write(
    `added user ${user.name}, bound to the vault ${user.vault}; mint a key with: exocortex keys create --user ${user.name} --name NAME\n`,
  );
}

export async function usersList(settings: Settings): Promise<void> {
  const { usersListOp, renderUsers } = await loadAccounts();
  const users = await reachOwner(
    settings,
    (owner) => owner.get<{ users: UserView[] }>('/v1/users').then((r) => r.users),
    () => withAccounts(settings, (t) => usersListOp(t)),
  );
  process.stdout.write(renderUsers(users) + '\n');
}

export async function usersAdmin(settings: Settings, name: string, admin: boolean): Promise<void> {
  const { usersAdminOp } = await loadAccounts();
  const user = await reachOwner(
    settings,
    (owner) => owner.post<{ user: UserView }>('/v1/users/admin', { name, admin }).then((r) => r.user),
    () => withAccounts(settings, (t) => usersAdminOp(t, { name, admin })),
  );
  process.stderr.write(
    `user ${user.name} is ${user.admin ? 'now an administrator (sees every user in the panel at /admin)' : 'no longer an administrator'}\n`,
  );
}

export async function usersDisable(settings: Settings, name: string): Promise<void> {
  const { usersDisableOp } = await loadAccounts();
  const r = await reachOwner(
    settings,
    (owner) => owner.post<{ disabled: string; keys: number; sessionsClosed: number }>('/v1/users/disable', { name }),
    () => withAccounts(settings, (t) => usersDisableOp(t, name)),
  );
  process.stderr.write(
    `disabled user ${r.disabled}: its ${r.keys} key${r.keys === 1 ? ' is' : 's are'} refused from now on${r.sessionsClosed ? `, ${r.sessionsClosed} open sessions closed` : ''}\n`,
  );
}

export async function usersLimits(
  settings: Settings,
  name: string,
  input: { limits: Record<string, unknown>; clear?: boolean },
): Promise<void> {
  const { usersLimitsOp, renderLimits } = await loadAccounts();
  const body = { name, limits: input.limits, clear: input.clear === true };
  const user = await reachOwner(
    settings,
    (owner) => owner.post<{ user: UserView }>('/v1/users/limits', body).then((r) => r.user),
    () => withAccounts(settings, (t) => usersLimitsOp(t, body)),
  );
  process.stderr.write(
    `limits of user ${user.name}: ${renderLimits(user.limits)} (over admission.perUser; they apply from the next call)\n`,
  );
}

/** Read a password from stdin (a pipe, or a terminal with echo off), without its final newline. */
async function readPassword(prompt: string): Promise<string> {
  const stdin = process.stdin;
  if (stdin.isTTY) {
    process.stderr.write(prompt);
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    return new Promise((resolve, reject) => {
      let typed = '';
      const onData = (chunk: string) => {
        for (const ch of chunk) {
          if (ch === '\r' || ch === '\n') {
            stdin.setRawMode(false);
            stdin.pause();
            stdin.off('data', onData);
            process.stderr.write('\n');
            return resolve(typed);
          }
          if (ch === '\u0003') {
            stdin.setRawMode(false);
            return reject(new Error('cancelled'));
          }
          if (ch === '\u007f') typed = typed.slice(0, -1);
          else typed += ch;
        }
      };
      stdin.on('data', onData);
    });
  }
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

export async function usersPasswd(settings: Settings, name: string): Promise<void> {
  const { usersPasswdOp } = await loadOAuth();
  const input = { name, password: await readPassword(`password for ${name}: `) };
  const r = await reachOwner(
    settings,
    (owner) => owner.post<{ user: string }>('/v1/users/passwd', input),
    () => withAccounts(settings, (t) => usersPasswdOp(t, input)),
  );
  process.stderr.write(`set the sign-in password of ${r.user} (OAuth connectors sign in with it)\n`);
}

export async function usersLoginLink(settings: Settings, name: string): Promise<void> {
  const { usersLoginLinkOp } = await loadOAuth();
  const r = await reachOwner(
    settings,
    (owner) => owner.post<{ user: string; code: string; expiresAt: string }>('/v1/users/login-link', { name }),
    () => withAccounts(settings, (t) => usersLoginLinkOp(t, name)),
  );
  process.stdout.write(`${r.code}\n`);
  process.stderr.write(
    `one-time sign-in code for ${r.user}, usable once until ${r.expiresAt}: paste it on the sign-in page your connector opens\n`,
  );
}

export async function oauthClientsList(settings: Settings): Promise<void> {
  const { oauthClientsListOp } = await loadOAuth();
  const clients = await reachOwner(
    settings,
    (owner) => owner.get<{ clients: ClientView[] }>('/v1/oauth/clients').then((r) => r.clients),
    () => withAccounts(settings, (t) => oauthClientsListOp(t)),
  );
  const lines = clients.map((c) =>
    [c.clientId, c.name, c.registration, String(c.grants), c.redirectUris.join(' ') || '-', c.createdAt ?? '-'].join(
      '\t',
    ),
  );
  process.stdout.write(['client id\tname\tregistered by\tgrants\tredirect uris\tcreated', ...lines].join('\n') + '\n');
}

export async function oauthClientsRevoke(settings: Settings, id: string): Promise<void> {
  const { oauthClientsRevokeOp } = await loadOAuth();
  const r = await reachOwner(
    settings,
    (owner) => owner.post<{ revoked: string; grants: number }>('/v1/oauth/clients/revoke', { id }),
    () => withAccounts(settings, (t) => oauthClientsRevokeOp(t, id)),
  );
  process.stderr.write(
    `removed client ${r.revoked} and its ${r.grants} grant${r.grants === 1 ? '' : 's'}: their tokens are refused from now on\n`,
  );
}

export async function oauthGrantsList(settings: Settings): Promise<void> {
  const { oauthGrantsListOp } = await loadOAuth();
  const grants = await reachOwner(
    settings,
    (owner) => owner.get<{ grants: GrantView[] }>('/v1/oauth/grants').then((r) => r.grants),
    () => withAccounts(settings, (t) => oauthGrantsListOp(t)),
  );
  const lines = grants.map((g) =>
    [g.id, g.user, g.clientId, g.scopes || '-', g.createdAt, g.expiresAt ?? '-'].join('\t'),
  );
  process.stdout.write(['grant id\tuser\tclient id\tscopes\tcreated\texpires', ...lines].join('\n') + '\n');
}

export async function oauthGrantsRevoke(settings: Settings, id: string): Promise<void> {
  const { oauthGrantsRevokeOp } = await loadOAuth();
  const r = await reachOwner(
    settings,
    (owner) => owner.post<{ revoked: string; rows: number }>('/v1/oauth/grants/revoke', { id }),
    () => withAccounts(settings, (t) => oauthGrantsRevokeOp(t, id)),
  );
  process.stderr.write(`revoked grant ${r.revoked}: its access and refresh tokens are refused from now on\n`);
}

export async function vaultsAdd(
  settings: Settings,
  name: string,
  root: string,
  opts: { shared?: boolean },
): Promise<void> {
  const { vaultsAddOp } = await loadAccounts();
  // The path is the operator's, typed here: resolve it against this shell's directory, not the server's.
  const input = {
    name,
    root: resolvePath({ ...settings, baseDir: process.cwd() }, root),
    shared: opts.shared === true,
  };
  const vault = await reachOwner(
    settings,
    (owner) => owner.post<{ vault: VaultView }>('/v1/vaults', input).then((r) => r.vault),
    () => withAccounts(settings, (t) => vaultsAddOp(t, input)),
  );
  process.stderr.write(
    `added vault ${vault.name} at ${vault.root} (${vault.status.state}); bind a user with: exocortex users add NAME --vault ${vault.name}\n`,
  );
}

export async function vaultsList(settings: Settings): Promise<void> {
  const { vaultsListOp, renderVaults } = await loadAccounts();
  const vaults = await reachOwner(
    settings,
    (owner) => owner.get<{ vaults: VaultView[] }>('/v1/vaults').then((r) => r.vaults),
    () => withAccounts(settings, (t) => vaultsListOp(t)),
  );
  process.stdout.write(renderVaults(vaults) + '\n');
}

export async function vaultsRemove(settings: Settings, name: string, opts: { force?: boolean }): Promise<void> {
  const { vaultsRemoveOp } = await loadAccounts();
  const force = opts.force === true;
  const r = await reachOwner(
    settings,
    (owner) => owner.post<{ removed: string; usersDisabled: string[] }>('/v1/vaults/remove', { name, force }),
    () => withAccounts(settings, (t) => vaultsRemoveOp(t, name, force)),
  );
  process.stderr.write(
    `removed vault ${r.removed} (its files are untouched)${r.usersDisabled.length ? `; disabled its users ${r.usersDisabled.join(', ')}` : ''}\n`,
  );
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
