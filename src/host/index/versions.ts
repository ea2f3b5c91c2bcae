// Contributor versions: which version each contributor's rows were derived with, per vault, and the
// range of note ids still to re-derive after a bump (or for a newly enabled contributor). One state row
// per (vault, contributor) instead of a per-note marker: notes written after the bump are derived by the
// normal path, so only ids up to the max at bump time need the background pass. Never reads files.
import { sql, type Kysely, type Transaction } from 'kysely';
import { contributorKey, type ContributorEntry } from './types.js';

interface State {
  version: number;
  derivedThrough: number;
  targetThrough: number;
}

export interface RederiveJob {
  readonly key: string;
  readonly entry: ContributorEntry;
  readonly after: number;
  readonly through: number;
}

export class ContributorVersions {
  private signature: string | undefined;
  private readonly states = new Map<string, State>();
  private readonly entries = new Map<string, ContributorEntry>();
  /** Notes still to re-derive, per contributor key. */
  readonly backlog = new Map<string, number>();

  constructor(
    private readonly db: Kysely<any>,
    private readonly vaultId: number,
  ) {}

  /** Whether the serving contributors differ from the ones last synced. */
  changed(entries: readonly ContributorEntry[]): boolean {
    return signatureOf(entries) !== this.signature;
  }

  /** Record the serving contributors: new or bumped ones get a re-derive range; vanished ones are forgotten. */
  async sync(entries: readonly ContributorEntry[]): Promise<void> {
    const signature = signatureOf(entries);
    if (signature === this.signature) return;
    const rows = await this.db
      .selectFrom('index_contributor_state')
      .selectAll()
      .where('vault_id', '=', this.vaultId)
      .execute();
    const stored = new Map(
      rows.map((r) => [
        r.contributor as string,
        {
          version: Number(r.version),
          derivedThrough: Number(r.derived_through),
          targetThrough: Number(r.target_through),
        },
      ]),
    );
    const max = await this.db
      .selectFrom('notes')
      .select(sql<string | null>`max(id)`.as('max'))
      .where('vault_id', '=', this.vaultId)
      .executeTakeFirst();
    const maxId = Number(max?.max ?? 0);
    this.states.clear();
    this.entries.clear();
    for (const entry of entries) {
      if (entry.contributor.observer) continue; // keeps no rows: nothing to re-derive
      const key = contributorKey(entry);
      const version = entry.contributor.version;
      let state = stored.get(key);
      if (!state || state.version !== version) {
        state = { version, derivedThrough: 0, targetThrough: maxId };
        await this.db
          .insertInto('index_contributor_state')
          .values({ vault_id: this.vaultId, contributor: key, version, derived_through: 0, target_through: maxId })
          .onConflict((oc) =>
            oc
              .columns(['vault_id', 'contributor'])
              .doUpdateSet({ version, derived_through: 0, target_through: maxId, updated_at: sql`now()` }),
          )
          .execute();
      }
      stored.delete(key);
      this.states.set(key, state);
      this.entries.set(key, entry);
    }
    const gone = [...stored.keys()];
    if (gone.length)
      await this.db
        .deleteFrom('index_contributor_state')
        .where('vault_id', '=', this.vaultId)
        .where('contributor', 'in', gone)
        .execute();
    this.backlog.clear();
    for (const key of this.states.keys()) await this.count(key);
    this.signature = signature;
  }

  /** The next contributor with notes left to re-derive. */
  nextJob(): RederiveJob | undefined {
    for (const [key, s] of this.states) {
      const entry = this.entries.get(key);
      if (entry && s.derivedThrough < s.targetThrough)
        return { key, entry, after: s.derivedThrough, through: s.targetThrough };
    }
    return undefined;
  }

  /** Mark notes up to `id` re-derived (inside the transaction that re-derived them). */
  async advance(trx: Transaction<any> | Kysely<any>, key: string, id: number): Promise<void> {
    const s = this.states.get(key);
    if (!s) return;
    const through = Math.min(id, s.targetThrough);
    await trx
      .updateTable('index_contributor_state')
      .set({ derived_through: through, updated_at: sql`now()` })
      .where('vault_id', '=', this.vaultId)
      .where('contributor', '=', key)
      .execute();
    s.derivedThrough = through;
  }

  async count(key: string): Promise<void> {
    const s = this.states.get(key);
    if (!s || s.derivedThrough >= s.targetThrough) {
      this.backlog.set(key, 0);
      return;
    }
    const r = await this.db
      .selectFrom('notes')
      .select(sql<string>`count(*)`.as('n'))
      .where('vault_id', '=', this.vaultId)
      .where('id', '>', s.derivedThrough)
      .where('id', '<=', s.targetThrough)
      .executeTakeFirst();
    this.backlog.set(key, Number(r?.n ?? 0));
  }

  /** Forget the in-memory signature so the next sync re-reads the state rows. */
  reset(): void {
    this.signature = undefined;
  }
}

function signatureOf(entries: readonly ContributorEntry[]): string {
  return entries
    .map((e) => `${contributorKey(e)}@${e.contributor.version}`)
    .sort()
    .join('|');
}
