// How a command reaches server state: through the process that owns the database when one runs (over its
// admin channel), and otherwise here, holding the database lock: the same operation either way. Heavy
// modules load lazily so `exocortex stdio` answers at once.
import type { DatabaseService, OpenedEngine } from '../host/db/index.js';
import type { Logger } from '../sdk/types.js';
import type { AdminClient } from '../host/admin/channel-client.js';
import type { AccountTarget } from '../host/admin/account-operations.js';
import { realpathSync } from 'node:fs';
import type { Settings } from '../host/settings/load.js';
import { DEFAULT_CONFIG_FILE, resolvePath } from '../host/settings/paths.js';

export const loadHost = () => import('../host/host.js').then((m) => m.Host);
export const loadKeys = () => import('../host/auth/api-keys.js');
export const loadLogger = () => import('../host/log/logger.js').then((m) => m.createLogger);
export const loadOps = () => import('../host/admin/operations.js');
export const loadAccounts = () => import('../host/admin/account-operations.js');
export const loadOAuth = () => import('../host/admin/oauth-operations.js');

/**
 * The database's engine, opening now for a Host.start given the same settings and logger: an embedded one's
 * thread boots (its WebAssembly, postgres's start) while this thread loads the host's modules. A failure (the
 * directory locked by another process) surfaces from Host.start, as it would without this.
 */
export function openEngineEarly(settings: Settings, log: Logger): Promise<OpenedEngine> {
  const opening = import('../host/db/open-engine.js').then((m) =>
    m.openEngine(settings.host.database.url, m.hostEngineOptions(settings, log)),
  );
  opening.catch(() => undefined);
  return opening;
}

/** How long a command waits for an owner that holds the lock but does not answer yet (it is starting). */
export const OWNER_WAIT_MS = 30_000;

/**
 * On a PostgreSQL server, vaults are indexed and served only by `exocortex serve` processes holding
 * their leases: a command that would index or serve here refuses, naming the fix, instead of becoming
 * one more indexer (the embedded database has one owner by its lock, so there it runs here).
 */
export function refuseOnServerDatabase(settings: Settings, command: string): void {
  if (!/^postgres(?:ql)?:\/\//.test(settings.host.database.url)) return;
  throw new CliRefusal(
    `${command} found no running server to reach: with a PostgreSQL server, only \`exocortex serve\` processes index and serve vaults (each vault by the one holding its lease). Start one, and set admin.socketPath in both configurations so that ${command} reaches it${command === 'exocortex stdio' ? ', or connect the client over HTTP (/mcp)' : ''}.`,
  );
}

/** A command that cannot run as configured: its message is printed and the process exits 1. */
export class CliRefusal extends Error {
  readonly code = 'needs_running_server';
}

/**
 * Run `remote` against the owner of the database, or `local` here when nobody owns it. An owner that is
 * still starting (lock held, socket not yet bound) is waited for; after OWNER_WAIT_MS its lock error stands.
 */
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
    { hostEngineOptions, migrateHost, openDatabase },
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
  const database = await openDatabase(settings.host.database.url, { ...hostEngineOptions(settings), poolSize: 2 });
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
export function withKeys<T>(
  settings: Settings,
  fn: (target: { db: DatabaseService['db']; vault: { id: number }; forgetKeys(): void }) => Promise<T>,
): Promise<T> {
  return withDatabase(settings, (database, vaultId) =>
    fn({ db: database.db, vault: { id: vaultId }, forgetKeys: () => undefined }),
  );
}

/** A user or vault command on a bare database in this process (no server: no pipelines to start or stop). */
export function withAccounts<T>(settings: Settings, fn: (target: AccountTarget) => Promise<T>): Promise<T> {
  return withDatabase(settings, (database) => fn({ db: database.db, settings, forgetKeys: () => undefined }));
}
