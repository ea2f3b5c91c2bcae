// The vaults table: one row per served vault root. Single-user mode has exactly one.
import { sql, type Kysely } from 'kysely';
import type { Logger } from '../../sdk/types.js';

export interface EnsureVaultOptions {
  /**
   * The serving host adopts a changed root: the index of the old root describes other files, so it is
   * dropped and rebuilt from empty (the change feed records one `reset`). CLI commands pass nothing and
   * leave the row alone, so only a server start changes what a vault is.
   */
  readonly adoptRoot?: { readonly log: Logger };
}

export async function ensureVault(db: Kysely<any>, name: string, root: string, options: EnsureVaultOptions = {}): Promise<number> {
  const existing = await db.selectFrom('vaults').select(['id', 'root']).where('name', '=', name).executeTakeFirst();
  if (existing) {
    if (existing.root !== root && options.adoptRoot) {
      options.adoptRoot.log.warn({ vault: name, from: existing.root, to: root }, 'vault.path changed: the index is rebuilt from the new root');
      await db.transaction().execute(async (trx) => {
        await trx.updateTable('vaults').set({ root }).where('id', '=', existing.id).execute();
        await sql`DELETE FROM notes WHERE vault_id = ${existing.id}`.execute(trx);
      });
    }
    return existing.id;
  }
  const row = await db.insertInto('vaults').values({ name, root }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}
