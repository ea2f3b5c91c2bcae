// Named (prepared) statements for the embedded engine. Kysely sends every parameterised query unnamed,
// so PGlite parses, analyses and plans it again on each call; the index's write-through statements are
// few and repeated, and their planning was a large share of a small commit. Naming a query by its text
// lets node-postgres send Parse once per connection and only Bind/Execute after that.
//
// Embedded only: a server reached through a transaction-pooling proxy (PgBouncer and the like) does not
// keep a connection's prepared statements, so the server engine stays unnamed.
import type pg from 'pg';

/** Statement texts named at most; texts seen after that run unnamed, as before. */
export const MAX_NAMED_STATEMENTS = 1000;

// A statement that changes a table's shape can make a prepared query's result columns differ
// ("cached plan must not change result type"): after one, texts are named afresh.
const SCHEMA_CHANGE = /(^|[;\n])\s*(create|alter|drop|truncate|do)\b/i;

type QueryFn = (...args: unknown[]) => unknown;

/** Wrap each client the pool connects so parameterised text queries run as named statements. */
export function nameStatements(pool: pg.Pool, max = MAX_NAMED_STATEMENTS): void {
  if (process.env.EXOCORTEX_PGLITE_UNNAMED === '1') return; // escape hatch, and the bench's baseline
  const names = new Map<string, string>();
  let next = 0;
  pool.on('connect', (client) => {
    const run = client.query.bind(client) as QueryFn;
    (client as unknown as { query: QueryFn }).query = (...args: unknown[]) => {
      const [text, values] = args;
      if (typeof text !== 'string') return run(...args);
      if (!Array.isArray(values) || values.length === 0 || args.length !== 2) {
        if (SCHEMA_CHANGE.test(text)) names.clear();
        return run(...args);
      }
      let name = names.get(text);
      if (name === undefined && names.size < max) names.set(text, (name = `exo_${next++}`));
      if (name === undefined) return run(text, values);
      const result = run({ name, text, values });
      // A shape change made on another path (or connection) still surfaces here once: forget the name
      // so the next call prepares the text again.
      if (result instanceof Promise) {
        result.catch((e: { code?: string }) => {
          if (e?.code === '0A000' && names.get(text) === name) names.delete(text);
        });
      }
      return result;
    };
  });
}
