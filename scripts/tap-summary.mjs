// Turns tap's closing "# { total: …, pass: … }" line into the plain "N passed, N failed" line CI reads.
import { readFileSync } from 'node:fs';

const log = readFileSync(process.argv[2] ?? 'tap.log', 'utf8');
const m = [...log.matchAll(/^# \{ (total: \d+[^}]*) \}$/gm)].pop();
if (!m) {
  console.log('0 passed, 1 failed');
} else {
  const o = Object.fromEntries(m[1].split(', ').map((s) => { const [k, v] = s.split(': '); return [k, Number(v)]; }));
  console.log(`${o.pass ?? 0} passed, ${o.fail ?? 0} failed, ${(o.skip ?? 0) + (o.todo ?? 0)} skipped`);
}
