// docs/performance.md lists every bench in bench/ with the usage line and the environment variables the bench
// itself declares, so `npm run bench -- --list` and the doc never disagree.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BENCH_DIR, benchNames, envOf, usageOf } from '../../../bench/lib/usage.js';

const doc = readFileSync(path.join(BENCH_DIR, '../docs/performance.md'), 'utf8');
const rowOf = (name: string) => doc.split('\n').find((l) => l.startsWith(`| \`${name}\` |`));

t.test('performance-benches.listed: every bench has a row with its usage line and variables', async (t) => {
  const names = benchNames();
  t.ok(names.length > 0, 'bench/ has benches');
  for (const name of names) {
    const row = rowOf(name);
    t.ok(row, `docs/performance.md has a row for bench/${name}.ts`);
    if (!row) continue;
    t.ok(row.includes(`\`${usageOf(name).replace(/\|/g, '\\|')}\``), `${name}: usage line "${usageOf(name)}"`);
    for (const v of envOf(name)) t.ok(row.includes(`\`${v}\``), `${name}: variable ${v}`);
  }
});

t.test('performance-benches.no-stale-rows: no row names a bench that is gone', async (t) => {
  const names = new Set(benchNames());
  const listed = [...doc.matchAll(/^\| `([a-z0-9-]+)` \|/gm)].map((m) => m[1]);
  t.same(
    listed.filter((n) => !names.has(n)),
    [],
  );
});
