// Turns tap's closing "# { total: …, pass: … }" lines (one per run in the log: CI runs the suite on the
// system Node, then again on Node 24) into the plain "N passed, N failed" line CI reads, printed last.
// Before it, each failure the log holds: the run it was in, its path (file › subtest › assertion) and the
// head of tap's diagnostic, so that a failure is named where only the end of CI's output is kept.
import { readFileSync } from 'node:fs';

const MAX_FAILURES = 20;
const MAX_DIAGNOSTIC_LINES = 24;

const log = readFileSync(process.argv[2] ?? 'tap.log', 'utf8');
const lines = log.split('\n');

/** Every failure in the log: leaf assertions, and failed subtests with no failed assertion inside them. */
function failures() {
  const found = [];
  let run = 'npm test';
  /** Open subtests: their indentation and name, and whether a failure inside them was already recorded. */
  const stack = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const marker = /^# Node 24: (.*)$/.exec(line);
    if (marker) {
      run = `Node 24 (${marker[1]})`;
      stack.length = 0;
      continue;
    }
    const subtest = /^(\s*)# Subtest: (.*)$/.exec(line);
    if (subtest) {
      stack.push({ indent: subtest[1].length, name: subtest[2], failed: false });
      continue;
    }
    const point = /^(\s*)(not )?ok \d+ - (.*?)(?: # .*)?$/.exec(line);
    if (!point) continue;
    const indent = point[1].length;
    const top = stack.at(-1);
    const closes = top !== undefined && top.indent === indent && top.name === point[3];
    if (closes) stack.pop();
    if (!point[2]) continue;
    if (closes && top.failed) {
      if (stack.length) stack.at(-1).failed = true;
      continue;
    }
    for (const open of stack) open.failed = true;
    const path = [...stack.map((s) => s.name), point[3]].join(' › ');
    // tap repeats a timed-out subtest's point when its function ends later: named once already.
    if (found.some((f) => f.run === run && f.path.startsWith(`${path} › `))) continue;
    found.push({ run, path, diagnostic: diagnostic(i + 1, indent) });
  }
  return found;
}

/** The YAML block tap writes under a failed point (from "---" to "..."), cut to its head. */
function diagnostic(from, indent) {
  const pad = ' '.repeat(indent + 2);
  if (lines[from] !== `${pad}---`) return [];
  const out = [];
  for (let i = from + 1; i < lines.length && lines[i] !== `${pad}...`; i++) out.push(lines[i].slice(pad.length));
  return out.length > MAX_DIAGNOSTIC_LINES
    ? [...out.slice(0, MAX_DIAGNOSTIC_LINES), `… (${out.length - MAX_DIAGNOSTIC_LINES} more lines in the log)`]
    : out;
}

const failed = failures();
if (failed.length) {
  console.log(`# ${failed.length} failure${failed.length === 1 ? '' : 's'} in the log:`);
  for (const f of failed.slice(0, MAX_FAILURES)) {
    console.log(`# not ok (${f.run}): ${f.path}`);
    for (const d of f.diagnostic) console.log(`#     ${d}`);
  }
  if (failed.length > MAX_FAILURES) console.log(`# … and ${failed.length - MAX_FAILURES} more`);
}

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
