// Turns tap's closing "# { total: …, pass: … }" lines (one per run in the log: CI runs the suite on the
// system Node, then again on Node 24) into the plain "N passed, N failed" line CI reads.
import { readFileSync } from 'node:fs';

const log = readFileSync(process.argv[2] ?? 'tap.log', 'utf8');
const runs = [...log.matchAll(/^# \{ (total: \d+[^}]*) \}$/gm)];
if (runs.length === 0) {
  console.log('0 passed, 1 failed');
} else {
  const o = { pass: 0, fail: 0, skip: 0, todo: 0 };
  for (const m of runs) {
    for (const part of m[1].split(', ')) {
      const [k, v] = part.split(': ');
      if (k in o) o[k] += Number(v);
    }
  }
  console.log(`${o.pass} passed, ${o.fail} failed, ${o.skip + o.todo} skipped`);
}
