// The config file's `vaults:` and `users:` lists against the database. The file wins for what it names;
// everything else is the CLI's. A contradiction between the two is refused by name, before any row changes.
import type { Kysely } from 'kysely';
import { Refusal } from '../../sdk/refusals.js';
import { disableUsers, insertUser, listUsers, OPERATOR_USER, updateUser, type UserRow } from '../auth/users.js';
import { changeRoot, deleteVault, insertVault, listVaults, updateVault, type VaultRow } from '../auth/vaults.js';
import type { DatabaseService } from '../db/index.js';
import { resolvePath, SettingsError, type Settings } from '../settings/load.js';
import type { HostSettings } from '../settings/schema.js';
import { examineRoot, overlapOf, type RootIdentity } from '../vault/roots.js';

export interface DeclaredChanges {
  /** Vaults to start serving (new, or with a new root: stop the old pipeline first). */
  readonly serve: readonly VaultRow[];
  /** Vaults whose root changed: stopped, then served again from `serve`. */
  readonly restart: readonly number[];
  /** Vaults no longer declared, deleted: stop them. */
  readonly removed: readonly number[];
  /** Users disabled or rebound (their cached keys must be forgotten). */
  readonly usersChanged: boolean;
}

/** Each problem is a refusal sentence naming the entry; none means the file and the database agree. */
export class DeclaredConflict extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('; '));
  }
}

const where = (s: { shared: boolean; root: string }) => `at ${s.root}${s.shared ? ' (shared)' : ''}`;

/**
 * Apply the declared vaults and users. `resolve` turns a path from the file into an absolute root;
 * `implicit` is the vault.path vault (name and id), which the file may bind users to but not redeclare.
 */
export async function applyDeclared(
  db: Kysely<any>,
  host: Pick<HostSettings, 'vaults' | 'users'>,
  resolve: (p: string) => string,
  implicit: { name: string; id: number },
): Promise<DeclaredChanges> {
  const problems: string[] = [];
  const vaults = await listVaults(db);
  const users = await listUsers(db);
  const byName = new Map(vaults.map((v) => [v.name, v]));
  const declaredVaults = host.vaults.map((v) => ({ ...v, root: resolve(v.path) }));
  const seen = new Set<string>();
  for (const d of declaredVaults) {
    if (seen.has(d.name)) problems.push(`the config file declares the vault "${d.name}" twice`);
    seen.add(d.name);
    if (d.name === implicit.name)
      problems.push(
        `the config file declares the vault "${d.name}", which is vault.name (the vault.path vault); give it another name`,
      );
    const stored = byName.get(d.name);
    if (
      stored &&
      stored.source !== 'config' &&
      d.name !== implicit.name &&
      (stored.root !== d.root || stored.shared !== d.shared)
    ) {
      problems.push(
        new Refusal('config_contradiction', { kind: 'vault', name: d.name, declared: where(d), stored: where(stored) })
          .message,
      );
    }
  }
  problems.push(...(await overlapProblems(declaredVaults, vaults)));

  const declaredNames = new Set(declaredVaults.map((v) => v.name));
  // A vault the file used to declare and no longer does is about to go: nobody may be bound to it.
  const vaultExists = (name: string) =>
    declaredNames.has(name) || name === implicit.name || (byName.has(name) && byName.get(name)!.source !== 'config');
  const userSeen = new Set<string>();
  const usersByName = new Map(users.map((u) => [u.name, u]));
  for (const u of host.users) {
    if (userSeen.has(u.name)) problems.push(`the config file declares the user "${u.name}" twice`);
    userSeen.add(u.name);
    if (u.name === OPERATOR_USER)
      problems.push(
        `the config file declares the user "${OPERATOR_USER}", which is the implicit user of vault.path; give it another name`,
      );
    if (!vaultExists(u.vault))
      problems.push(
        `the config file binds the user "${u.name}" to the vault "${u.vault}", which does not exist (declare it under vaults, or make it with exocortex vaults add)`,
      );
    const stored = usersByName.get(u.name);
    if (stored && stored.source !== 'config' && stored.vaultName !== u.vault) {
      problems.push(
        new Refusal('config_contradiction', {
          kind: 'user',
          name: u.name,
          declared: `bound to the vault "${u.vault}"`,
          stored: `bound to the vault "${stored.vaultName ?? 'none'}"`,
        }).message,
      );
    }
  }

  // Vaults the file no longer declares go, unless users it does not declare still use them.
  const dropped = vaults.filter((v) => v.source === 'config' && !declaredNames.has(v.name));
  for (const v of dropped) {
    const left = users.filter((u) => u.vaultId === v.id && !u.disabledAt && u.source !== 'config');
    if (left.length)
      problems.push(
        new Refusal('vault_in_use', { vault: v.name, users: left.map((u) => u.name) }).message +
          ' (it was removed from the config file)',
      );
  }

  // Sharing: more than one enabled user on a vault needs it marked shared.
  const bound = new Map<string, string[]>();
  const bind = (vault: string | null, name: string) => vault && bound.set(vault, [...(bound.get(vault) ?? []), name]);
  for (const u of users) if (!u.disabledAt && !userSeen.has(u.name) && u.source !== 'config') bind(u.vaultName, u.name);
  for (const u of host.users) if (!u.disabled) bind(u.vault, u.name);
  for (const [vault, names] of bound) {
    if (names.length < 2) continue;
    const shared = declaredVaults.find((v) => v.name === vault)?.shared ?? byName.get(vault)?.shared ?? false;
    if (!shared) problems.push(new Refusal('vault_not_shared', { vault, users: names }).message);
  }
  if (problems.length) throw new DeclaredConflict(problems);

  // No contradiction: write what the file says.
  const serve: VaultRow[] = [];
  const restart: number[] = [];
  for (const d of declaredVaults) {
    const stored = byName.get(d.name);
    if (!stored) {
      serve.push(await insertVault(db, { name: d.name, root: d.root, shared: d.shared, source: 'config' }));
      continue;
    }
    if (stored.source !== 'config' || stored.shared !== d.shared)
      await updateVault(db, stored.id, { source: 'config', shared: d.shared });
    if (stored.root !== d.root) {
      await changeRoot(db, stored.id, d.root);
      restart.push(stored.id);
      serve.push({ ...stored, root: d.root, shared: d.shared, source: 'config' });
    }
  }
  for (const v of dropped) await deleteVault(db, v.id);
  let usersChanged = false;
  const idOf = async (name: string) =>
    name === implicit.name
      ? implicit.id
      : (byName.get(name) ?? serve.find((v) => v.name === name) ?? (await listVaults(db)).find((v) => v.name === name))!
          .id;
  for (const u of host.users) {
    const stored = usersByName.get(u.name);
    const vaultId = await idOf(u.vault);
    if (!stored) {
      const made = await insertUser(db, {
        name: u.name,
        vaultId,
        isAdmin: u.admin,
        source: 'config',
        limits: u.limits ?? {},
      });
      if (u.disabled) await disableUsers(db, [made.id]);
      continue;
    }
    if (differs(stored, { vaultId, isAdmin: u.admin, disabled: u.disabled, limits: u.limits ?? {} })) {
      await updateUser(db, stored.id, {
        vaultId,
        isAdmin: u.admin,
        source: 'config',
        disabled: u.disabled,
        limits: u.limits ?? {},
      });
      usersChanged = true;
    }
  }
  const gone = users.filter((u) => u.source === 'config' && !userSeen.has(u.name) && !u.disabledAt);
  if (gone.length) {
    await disableUsers(
      db,
      gone.map((u) => u.id),
    );
    usersChanged = true;
  }
  return { serve, restart, removed: dropped.map((v) => v.id), usersChanged };
}

function differs(
  stored: UserRow,
  want: { vaultId: number; isAdmin: boolean; disabled: boolean; limits: object },
): boolean {
  const limits = JSON.stringify(sortedKeys(stored.limits)) !== JSON.stringify(sortedKeys(want.limits));
  return (
    stored.source !== 'config' ||
    stored.vaultId !== want.vaultId ||
    stored.isAdmin !== want.isAdmin ||
    (stored.disabledAt !== null) !== want.disabled ||
    limits
  );
}

/** A JSON value with its objects' keys sorted, so two equal limit sets compare equal as strings. */
function sortedKeys(v: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sortedKeys((v as Record<string, unknown>)[k])]),
  );
}

/** Declared roots that overlap each other or a vault of the database (roots that cannot be examined are skipped: they fail when served). */
async function overlapProblems(
  declared: ReadonlyArray<{ name: string; root: string }>,
  stored: readonly VaultRow[],
): Promise<string[]> {
  const known: Array<{ name: string; identity: RootIdentity }> = [];
  const examine = async (root: string) => examineRoot(root).catch(() => undefined);
  for (const v of stored) {
    if (declared.some((d) => d.name === v.name)) continue;
    const identity = await examine(v.root);
    if (identity) known.push({ name: v.name, identity });
  }
  const out: string[] = [];
  for (const d of declared) {
    const identity = await examine(d.root);
    if (!identity) continue;
    for (const other of known) {
      const relation = overlapOf(identity, other.identity);
      if (relation)
        out.push(
          `${new Refusal('vault_overlap', { root: identity.root, relation, other: other.identity.root, otherVault: other.name }).message} (the vault "${d.name}" in the config file)`,
        );
    }
    known.push({ name: d.name, identity });
  }
  return out;
}

/** The config file's vaults and users at start, or a SettingsError naming each contradiction with the database. */
export async function applyDeclaredOrRefuse(
  database: DatabaseService,
  settings: Settings,
  implicit: { name: string; id: number },
): Promise<void> {
  try {
    await applyDeclared(database.db, settings.host, (p) => resolvePath(settings, p), implicit);
  } catch (e) {
    if (e instanceof DeclaredConflict) throw new SettingsError(e.problems);
    throw e;
  }
}
