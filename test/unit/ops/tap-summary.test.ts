// CI keeps only the end of its output: scripts/tap-summary.mjs names each failure there (its run, its path and
// the head of tap's diagnostic) before the "N passed, N failed" line, which stays last.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';

const script = new URL('../../../scripts/tap-summary.mjs', import.meta.url).pathname;
const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-tap-summary-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

function summarise(log: string): string[] {
  const file = path.join(dir, 'tap.log');
  writeFileSync(file, log);
  return execFileSync(process.execPath, [script, file], { encoding: 'utf8' }).trimEnd().split('\n');
}

// The shapes tap 21 writes: a failed assertion two subtests deep, a timed-out subtest (whose point tap repeats
// when its function ends), a file that exits without a failed assertion; then the same suite on Node 24, passing.
const FIRST = `TAP version 14
# Subtest: test/unit/a.test.ts
    # Subtest: outer
        # Subtest: inner
            not ok 1 - one is two
              ---
              compare: ===
              diff: |
                -2
                +1
              ...
            ok 2 - should be equal
            1..2
        not ok 1 - inner # time=28.278ms
          ---
          at:
            lineNumber: 3
          ...
        1..1
    not ok 1 - outer # time=36.955ms
    # Subtest: slow
        not ok 1 - timeout!
          ---
          expired: slow
          ...
    not ok 2 - slow # time=220.635ms
    not ok 3 - slow # time=220.635ms
    1..3
not ok 1 - test/unit/a.test.ts # time=50.617ms
# Subtest: test/unit/b.test.ts
not ok 2 - test/unit/b.test.ts # time=417.612ms
  ---
  exitCode: 3
  ...
# Subtest: test/unit/c.test.ts
    ok 1 - fine
    1..1
ok 3 - test/unit/c.test.ts # time=1ms
# { total: 5, pass: 2, fail: 3 }
`;
const SECOND = `# Node 24: v24.11.1
TAP version 14
# Subtest: test/unit/c.test.ts
    ok 1 - fine
    1..1
ok 1 - test/unit/c.test.ts # time=1ms
# { total: 5, pass: 4, skip: 1 }
`;

t.test('each failure is named with its run, its path and its diagnostic; the totals stay last', async (t) => {
  const out = summarise(FIRST + SECOND);
  t.equal(out[0], '# 3 failures in the log:');
  t.same(
    out.filter((l) => l.startsWith('# not ok')),
    [
      '# not ok (npm test): test/unit/a.test.ts › outer › inner › one is two',
      '# not ok (npm test): test/unit/a.test.ts › slow › timeout!',
      '# not ok (npm test): test/unit/b.test.ts',
    ],
    'the failed assertion, not the subtests around it; a repeated point once; a failed file with no assertion',
  );
  t.ok(out.includes('#     diff: |') && out.includes('#       +1'), "tap's diagnostic under its failure");
  t.ok(out.includes('#     exitCode: 3'));
  t.equal(out.at(-1), '6 passed, 3 failed, 1 skipped');
});

t.test('a failure in the Node 24 run says so', async (t) => {
  const out = summarise(SECOND.replace('    ok 1 - fine', '    not ok 1 - fine'));
  t.same(out, [
    '# 1 failure in the log:',
    '# not ok (Node 24 (v24.11.1)): test/unit/c.test.ts › fine',
    '4 passed, 0 failed, 1 skipped',
  ]);
});

t.test('a passing log prints the totals alone; a log with none counts as a failure', async (t) => {
  t.same(summarise(SECOND), ['4 passed, 0 failed, 1 skipped']);
  t.same(summarise('TAP version 14\n'), ['0 passed, 1 failed']);
});
