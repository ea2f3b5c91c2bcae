// The vaults table: one row per vault root (name, root, whether several users may share it, and who made
// it: the implicit single-user vault, the config file or the CLI). Rows only; serving is src/host/vaults.
import { sql, type Kysely } from 'kysely';
import type { Logger } from '../../sdk/types.js';

export type Source = 'implicit' | 'config' | 'cli';

export interface VaultRow {
  readonly id: number;
  readonly name: string;
  readonly root: string;
  readonly shared: boolean;
  readonly source: Source;
}

export interface EnsureVaultOptions {
  /**
   * The serving host adopts a changed root: the index of the old root describes other files, so it is
   * dropped and rebuilt from empty (the change feed records one `reset`). CLI commands pass nothing and
   * leave the row alone, so only a server start changes what a vault is.
   */
  readonly adoptRoot?: { readonly log: Logger };
  /**
   * Refuse a changed root instead of adopting it: on a PostgreSQL server another process may serve the
   * vault from the root the row names, and a process that resolved another path must not wipe its index.
   */
  readonly refuseRootChange?: boolean;
}

/** The implicit vault of `vault.path` (single-user mode's one vault), created on first use. */
export async function ensureVault(
  db: Kysely<any>,
  name: string,
  root: string,
  options: EnsureVaultOptions = {},
): Promise<number> {
  const existing = await db.selectFrom('vaults').select(['id', 'root']).where('name', '=', name).executeTakeFirst();
  if (existing) {
    if (existing.root !== root && options.refuseRootChange)
      throw new Error(
        `vault "${name}" is recorded with the root ${existing.root}, but this process resolved vault.path to ${root}; on a shared PostgreSQL server every process must name the same root (set vault.path to the recorded root in this process's configuration)`,
      );
    if (existing.root !== root && options.adoptRoot) {
      options.adoptRoot.log.warn(
        { vault: name, from: existing.root, to: root },
        'vault.path changed: the index is rebuilt from the new root',
      );
      await changeRoot(db, existing.id, root);
    }
    return existing.id;
  }
  // Two processes starting at once on one server: the second insert yields to the first.
  const row = await db
    .insertInto('vaults')
    .values({ name, root, source: 'implicit' })
    .onConflict((oc) => oc.column('name').doNothing())
    .returning('id')
    .executeTakeFirst();
  return row ? row.id : ensureVault(db, name, root, options);
}

/** A vault's root changed: its index describes other files, so it goes with the change. */
export async function changeRoot(db: Kysely<any>, id: number, root: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('vaults').set({ root }).where('id', '=', id).execute();
    await sql`DELETE FROM notes WHERE vault_id = ${id}`.execute(trx);
  });
}

export async function listVaults(db: Kysely<any>): Promise<VaultRow[]> {
  const rows = await db.selectFrom('vaults').select(['id', 'name', 'root', 'shared', 'source']).orderBy('id').execute();
  return rows.map(toVault);
}

export async function vaultByName(db: Kysely<any>, name: string): Promise<VaultRow | undefined> {
  const row = await db
    .selectFrom('vaults')
    .select(['id', 'name', 'root', 'shared', 'source'])
    .where('name', '=', name)
    .executeTakeFirst();
  return row ? toVault(row) : undefined;
}

export async function insertVault(
  db: Kysely<any>,
  v: { name: string; root: string; shared: boolean; source: Source },
): Promise<VaultRow> {
  const row = await db
    .insertInto('vaults')
    .values(v)
    .returning(['id', 'name', 'root', 'shared', 'source'])
    .executeTakeFirstOrThrow();
  return toVault(row);
}

export async function updateVault(
  db: Kysely<any>,
  id: number,
  set: { shared?: boolean; source?: Source },
): Promise<void> {
  await db.updateTable('vaults').set(set).where('id', '=', id).execute();
}

/** Drops the vault and, by cascade, every row derived from it; its users stay, bound to nothing. */
export async function deleteVault(db: Kysely<any>, id: number): Promise<void> {
  await db.deleteFrom('vaults').where('id', '=', id).execute();
}

function toVault(r: any): VaultRow {
  return { id: Number(r.id), name: r.name, root: r.root, shared: r.shared === true, source: r.source };
}
