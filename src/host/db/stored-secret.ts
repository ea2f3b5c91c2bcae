// A secret every process sharing the database must agree on (OAuth signing keys, the requestState key,
// the cluster's hop key): made by `make` the first time any process asks, and race-safe across
// processes (the first insert wins; everyone reads the winner).
import type { Kysely } from 'kysely';

/** `make` returns an object or an array (a JSON document), never a bare string. */
export async function storedSecret<T extends object>(db: Kysely<any>, name: string, make: () => T): Promise<T> {
  await db
    .insertInto('oauth_secrets')
    .values({ name, value: JSON.stringify(make()) })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('oauth_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return (typeof row.value === 'string' ? JSON.parse(row.value) : row.value) as T;
}
