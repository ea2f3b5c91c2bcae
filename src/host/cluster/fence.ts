// The fence of a vault's lease: an index transaction's first statement, which refuses the commit when another
// process owns the vault under a newer epoch (cluster/leases.ts hands the epochs out). Apart from the leases so
// that the index needs only this, not their connection and rounds.
import { sql, type Kysely } from 'kysely';

/** The clause an index transaction runs first: the row it locks FOR SHARE blocks a takeover until commit. */
export async function checkFence(trx: Kysely<any>, vaultId: number, owner: string, epoch: number): Promise<void> {
  const r =
    await sql`SELECT 1 FROM vault_leases WHERE vault_id = ${vaultId} AND owner = ${owner} AND epoch = ${epoch} FOR SHARE`.execute(
      trx,
    );
  if (r.rows.length === 0) throw new FencedError(vaultId, epoch);
}

/** A commit refused because another process owns the vault under a newer epoch. */
export class FencedError extends Error {
  constructor(
    readonly vaultId: number,
    readonly epoch: number,
  ) {
    super(`vault ${vaultId}: lease epoch ${epoch} is no longer current; another process owns the vault`);
    this.name = 'FencedError';
  }
}
