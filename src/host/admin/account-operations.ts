// Operator commands on users and vaults (`exocortex users …`, `exocortex vaults …`), over whatever owns the
// database: the running server, which starts and stops the vault's pipeline live, or the CLI process.
// Refusals carry the catalog's codes and sentences; nothing here writes to the terminal.
import { vaultOwners, type OwnerInfo } from '../cluster/leases.js';
import { sql, type Kysely } from 'kysely';
import { Refusal, type RefusalCode, type RefusalDetails } from '../../sdk/refusals.js';
import {
  disableUsers,
  insertUser,
  listUsers,
  OPERATOR_USER,
  updateUser,
  userByName,
  usersOfVault,
} from '../auth/users.js';
import {
  deleteVault,
  insertVault,
  listVaults,
  updateVault,
  vaultByName,
  type Source,
  type VaultRow,
} from '../auth/vaults.js';
import type { Settings } from '../settings/load.js';
import { ACCOUNT_NAME, userLimitsSchema, type UserLimitsOverride } from '../settings/schema.js';
import { openVault } from '../vault/index.js';
import { examineRoot, refuseOverlap, type RootIdentity } from '../vault/roots.js';
import type { VaultHealth, VaultRegistry } from '../vaults/registry.js';
import { OperationError } from './errors.js';

/** What the account commands need of their owner; `vaults` and `closeSessionsOf` only in a running server. */
export interface AccountTarget {
  readonly db: Kysely<any>;
  readonly settings: Settings;
  readonly vaults?: VaultRegistry;
  forgetKeys(): void;
  closeSessionsOf?(credentialIds: ReadonlySet<string>): Promise<number>;
  /** Let the serving families drop their rows of vaults that are gone (only in a running server). */
  vaultsRemoved?(): Promise<void>;
}

export interface UserView {
  readonly name: string;
  readonly vault: string | null;
  readonly admin: boolean;
  readonly state: 'active' | 'disabled';
  readonly source: Source;
  readonly keys: number;
  /** The user's own limits over admission.perUser (empty when none). */
  readonly limits: UserLimitsOverride;
}

export interface VaultView {
  readonly name: string;
  readonly root: string;
  readonly shared: boolean;
  readonly source: Source;
  readonly users: readonly string[];
  /** Live status when a server serves it; `stopped` when no server runs. */
  readonly status: VaultHealth | { readonly state: 'stopped' };
  /**
   * Several processes on one PostgreSQL server: the process holding the vault's lease (null: none now)
   * and the epoch it holds it under. Absent with one process (the embedded database).
   */
  readonly owner?: { readonly process: string; readonly url: string | null; readonly epoch: number } | null;
}

/** A refusal from the catalog, as an operator command's failure. */
export function refused(code: RefusalCode, details: RefusalDetails): OperationError {
  return new OperationError(code, new Refusal(code, details).message);
}

function checkName(kind: 'user' | 'vault', name: unknown): string {
  if (typeof name !== 'string' || !ACCOUNT_NAME.test(name))
    throw new OperationError(
      'invalid_arguments',
      `a ${kind} name is 1 to 80 letters, digits, . _ or -, starting with a letter or digit`,
    );
  return name;
}

function refuseDeclared(t: AccountTarget, kind: 'user' | 'vault', name: string): void {
  const declared =
    kind === 'user'
      ? t.settings.host.users.some((u) => u.name === name)
      : t.settings.host.vaults.some((v) => v.name === name);
  if (declared) throw refused('declared_in_config', { kind, name, file: t.settings.file ?? 'none' });
}

export async function usersAddOp(
  t: AccountTarget,
  input: { name: string; vault: string; admin?: boolean; share?: boolean },
): Promise<UserView> {
  const name = checkName('user', input.name);
  refuseDeclared(t, 'user', name);
  if (await userByName(t.db, name)) throw refused('name_taken', { kind: 'user', name });
  const vault = await vaultByName(t.db, String(input.vault ?? ''));
  if (!vault) throw refused('unknown_vault', { vault: String(input.vault ?? '') });
  const others = await usersOfVault(t.db, vault.id);
  if (others.length > 0 && !vault.shared) {
    if (!input.share) throw refused('vault_not_shared', { vault: vault.name, users: others });
    refuseDeclared(t, 'vault', vault.name); // the file says whether a declared vault is shared
    await updateVault(t.db, vault.id, { shared: true });
  }
  await insertUser(t.db, { name, vaultId: vault.id, isAdmin: input.admin === true, source: 'cli' });
  return (await usersListOp(t)).find((u) => u.name === name)!;
}

export async function usersListOp(t: Pick<AccountTarget, 'db'>): Promise<UserView[]> {
  const users = await listUsers(t.db);
  const counts = await t.db
    .selectFrom('api_keys')
    .select(['user_id', (eb) => eb.fn.countAll<string>().as('n')])
    .where('revoked_at', 'is', null)
    .groupBy('user_id')
    .execute();
  const keys = new Map(counts.map((c) => [Number(c.user_id), Number(c.n)]));
  return users.map((u) => ({
    name: u.name,
    vault: u.vaultName,
    admin: u.isAdmin,
    state: u.disabledAt ? 'disabled' : 'active',
    source: u.source,
    keys: keys.get(u.id) ?? 0,
    limits: u.limits,
  }));
}

/**
 * Set (merge into) or clear a user's own limits; they apply from the user's next call. `limits` takes
 * the keys of admission.perUser; 0 removes that limit for the user even where the default sets one.
 */
export async function usersLimitsOp(
  t: AccountTarget,
  input: { name: string; limits?: unknown; clear?: boolean },
): Promise<UserView> {
  const name = String(input.name ?? '');
  const user = await userByName(t.db, name);
  if (!user) throw refused('unknown_user', { user: name });
  refuseDeclared(t, 'user', name);
  const parsed = userLimitsSchema.safeParse(input.limits ?? {});
  if (!parsed.success)
    throw new OperationError(
      'invalid_arguments',
      `limits: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ')}`,
    );
  const base = input.clear ? {} : user.limits;
  const limits = {
    ...base,
    ...parsed.data,
    concurrency: { ...(base.concurrency ?? {}), ...(parsed.data.concurrency ?? {}) },
  };
  if (Object.keys(limits.concurrency).length === 0) delete (limits as { concurrency?: unknown }).concurrency;
  await updateUser(t.db, user.id, { limits });
  t.forgetKeys();
  return (await usersListOp(t)).find((u) => u.name === name)!;
}

/**
 * Mark a user an administrator (or not, with `admin: false`): admins see every user's vaults, keys and
 * usage in the panel and reach its danger zone. Their open panel pages see the change on the next request.
 */
export async function usersAdminOp(t: AccountTarget, input: { name: string; admin: boolean }): Promise<UserView> {
  const name = String(input.name ?? '');
  const user = await userByName(t.db, name);
  if (!user) throw refused('unknown_user', { user: name });
  refuseDeclared(t, 'user', name);
  await updateUser(t.db, user.id, { isAdmin: input.admin === true });
  return (await usersListOp(t)).find((u) => u.name === name)!;
}

/** Disable a user: every key of theirs is refused from the next request on, open sessions are closed. */
export async function usersDisableOp(
  t: AccountTarget,
  nameArg: string,
): Promise<{ disabled: string; keys: number; sessionsClosed: number }> {
  const name = String(nameArg ?? '');
  const user = await userByName(t.db, name);
  if (!user) throw refused('unknown_user', { user: name });
  refuseDeclared(t, 'user', name);
  await disableUsers(t.db, [user.id]);
  t.forgetKeys();
  const keyIds = (await t.db.selectFrom('api_keys').select('id').where('user_id', '=', user.id).execute()).map((r) =>
    String(r.id),
  );
  // OAuth principals are named after their grant; the user's grants' sessions and streams end too.
  const grantIds = await oauthGrantsOf(t.db, name);
  const sessionsClosed = (await t.closeSessionsOf?.(new Set([...keyIds, ...grantIds.map((g) => `oauth:${g}`)]))) ?? 0;
  return { disabled: name, keys: keyIds.length, sessionsClosed };
}

/** Ids of a user's OAuth grants (none where the OAuth tables are absent or hold nothing of theirs). */
async function oauthGrantsOf(db: Kysely<any>, user: string): Promise<string[]> {
  const rows = await db
    .selectFrom('oauth_records')
    .select('id')
    .where('model', '=', 'Grant')
    .where(sql<string>`payload->>'accountId'`, '=', user)
    .execute();
  return rows.map((r) => String(r.id));
}

/** Add a vault (root given absolute by the CLI); refused when its root is unusable or overlaps another. */
export async function vaultsAddOp(
  t: AccountTarget,
  input: { name: string; root: string; shared?: boolean },
): Promise<VaultView> {
  const name = checkName('vault', input.name);
  refuseDeclared(t, 'vault', name);
  if (typeof input.root !== 'string' || !input.root.startsWith('/'))
    throw new OperationError('invalid_arguments', 'the vault root must be an absolute path');
  if (await vaultByName(t.db, name)) throw refused('name_taken', { kind: 'vault', name });
  const identity = await examineRoot(input.root).catch(rethrowRefusal);
  try {
    refuseOverlap(identity, await knownRoots(t));
  } catch (e) {
    rethrowRefusal(e);
  }
  if (!t.vaults) {
    // No server: probe the filesystem's guarantees the way serving it will.
    const fs = await openVault(identity.real, { log: undefined }).catch((e) => rethrowRefusal(e, input.root));
    await fs.close();
  }
  const row = await insertVault(t.db, { name, root: input.root, shared: input.shared === true, source: 'cli' });
  if (t.vaults) {
    const served = await t.vaults.serve(row);
    if (served.state !== 'serving') {
      const reason = served.reason ?? 'it cannot be opened';
      await t.vaults.stop(row.id);
      await deleteVault(t.db, row.id);
      throw refused('vault_root_unusable', { root: input.root, reason });
    }
  }
  return (await vaultsListOp(t)).find((v) => v.name === name)!;
}

export async function vaultsListOp(t: Pick<AccountTarget, 'db' | 'vaults'>): Promise<VaultView[]> {
  const [vaults, users, owners] = await Promise.all([
    listVaults(t.db),
    listUsers(t.db),
    vaultOwners(t.db).catch(() => new Map<number, OwnerInfo>()),
  ]);
  const health = t.vaults?.health() ?? {};
  const leased = await hasLeases(t.db);
  return vaults.map((v) => ({
    name: v.name,
    root: v.root,
    shared: v.shared,
    source: v.source,
    users: users.filter((u) => u.vaultId === v.id && !u.disabledAt).map((u) => u.name),
    status: health[v.name] ?? { state: 'stopped' as const },
    ...(leased ? { owner: ownerView(owners.get(v.id)) } : {}),
  }));
}

function ownerView(o: OwnerInfo | undefined): VaultView['owner'] {
  return o ? { process: o.owner, url: o.url, epoch: o.epoch } : null;
}

/** Whether vault leases were ever taken here (several processes on one PostgreSQL server). */
async function hasLeases(db: AccountTarget['db']): Promise<boolean> {
  try {
    return (await db.selectFrom('vault_leases').select('vault_id').limit(1).execute()).length > 0;
  } catch {
    return false;
  }
}

/**
 * Remove a vault: its pipeline stops and its index rows go (the files stay). Refused while users use it,
 * naming them, unless forced, which disables them.
 */
export async function vaultsRemoveOp(
  t: AccountTarget,
  nameArg: string,
  force: boolean,
): Promise<{ removed: string; usersDisabled: readonly string[] }> {
  const name = String(nameArg ?? '');
  const vault = await vaultByName(t.db, name);
  if (!vault) throw refused('unknown_vault', { vault: name });
  refuseDeclared(t, 'vault', name);
  if (vault.name === t.settings.host.vault.name)
    throw new OperationError(
      'invalid_arguments',
      `the vault "${name}" is vault.path's (the operator's); change vault.path in the config file instead`,
    );
  const users = await usersOfVault(t.db, vault.id);
  if (users.length && !force) throw refused('vault_in_use', { vault: name, users });
  const bound = (await listUsers(t.db)).filter((u) => u.vaultId === vault.id);
  await disableUsers(
    t.db,
    bound.map((u) => u.id),
  );
  t.forgetKeys();
  if (bound.length && t.closeSessionsOf) {
    const keyIds = await t.db
      .selectFrom('api_keys')
      .select('id')
      .where(
        'user_id',
        'in',
        bound.map((u) => u.id),
      )
      .execute();
    await t.closeSessionsOf(new Set(keyIds.map((k) => String(k.id))));
  }
  await t.vaults?.stop(vault.id);
  await deleteVault(t.db, vault.id);
  await t.vaultsRemoved?.();
  return { removed: name, usersDisabled: users };
}

/** Every other vault's root identity: from the running registry when it knows it, else examined now. */
async function knownRoots(t: AccountTarget): Promise<Array<{ name: string; identity: RootIdentity }>> {
  const out: Array<{ name: string; identity: RootIdentity }> = [];
  for (const v of await listVaults(t.db)) {
    const identity = t.vaults?.get(v.id)?.identity ?? (await examineRoot(v.root).catch(() => undefined));
    if (identity) out.push({ name: v.name, identity });
  }
  return out;
}

function rethrowRefusal(e: unknown, root?: string): never {
  if (e instanceof Refusal) {
    if (e.code === 'unsupported_filesystem' && root)
      throw refused('vault_root_unusable', { root, reason: String(e.details.reason ?? e.message) });
    throw new OperationError(e.code, e.message);
  }
  throw e;
}

export function renderUsers(users: readonly UserView[]): string {
  const lines = users.map((u) =>
    [u.name, u.vault ?? '-', u.state, u.admin ? 'admin' : '-', u.source, String(u.keys), renderLimits(u.limits)].join(
      '\t',
    ),
  );
  return ['name\tvault\tstate\tadmin\tsource\tkeys\tlimits', ...lines].join('\n');
}

/** `callsPerMinute=60 concurrency.write=1`, or `-` for a user on the defaults. */
export function renderLimits(limits: UserLimitsOverride | undefined): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(limits ?? {})) {
    if (v !== null && typeof v === 'object') for (const [c, n] of Object.entries(v)) parts.push(`${k}.${c}=${n}`);
    else parts.push(`${k}=${v}`);
  }
  return parts.join(' ') || '-';
}

export function renderVaults(vaults: readonly VaultView[]): string {
  const lines = vaults.map((v) => {
    const s = v.status as VaultHealth & { state: string };
    const detail =
      s.state === 'serving'
        ? `${s.notes ?? 0} notes, ${s.pending ?? 0} pending, watcher ${s.watcher ?? '-'}${s.lastError ? `, last error: ${s.lastError}` : ''}`
        : (s.reason ?? '');
    const owner = v.owner === undefined ? [] : [v.owner ? `${v.owner.process} (epoch ${v.owner.epoch})` : 'none'];
    return [
      v.name,
      v.root,
      v.shared ? 'shared' : '-',
      v.source,
      v.users.join(',') || '-',
      s.state,
      ...owner,
      detail,
    ].join('\t');
  });
  const ownerColumn = vaults.some((v) => v.owner !== undefined) ? ['owner'] : [];
  return [['name', 'root', 'shared', 'source', 'users', 'state', ...ownerColumn, 'detail'].join('\t'), ...lines].join(
    '\n',
  );
}

export { OPERATOR_USER, type VaultRow };
