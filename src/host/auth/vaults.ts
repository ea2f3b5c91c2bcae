// The vaults table: one row per served vault root. Single-user mode has exactly one.
import type { Kysely } from 'kysely';

export async function ensureVault(db: Kysely<any>, name: string, root: string): Promise<number> {
  const existing = await db.selectFrom('vaults').select(['id', 'root']).where('name', '=', name).executeTakeFirst();
  if (existing) {
    if (existing.root !== root) await db.updateTable('vaults').set({ root }).where('id', '=', existing.id).execute();
    return existing.id;
  }
  const row = await db.insertInto('vaults').values({ name, root }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}
