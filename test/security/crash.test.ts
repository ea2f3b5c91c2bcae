// Crash suite: a child writing/replacing/moving notes is SIGKILLed at random moments (>= 200 times); after
// each kill every note holds one complete version, nothing reported as written is missing, and no
// staging name is visible (the walk a restarted indexer runs sweeps any a kill left on disk).

import t from 'tap';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openVault } from '../../src/host/vault/index.js';
import { ADDON, bundleFixture } from '../fixtures/bundle.js';
import { NOTES, parseNote } from '../fixtures/crash-notes.js';

const KILLS_PER_LANE = 100;
const LANES = 2;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'exo-crash-'));
t.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }));

function rawNames(root: string): string[] {
  const out: string[] = [];
  const visit = (dir: string, rel: string) => {
    for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
      const r = rel ? `${rel}/${d.name}` : d.name;
      out.push(r);
      if (d.isDirectory()) visit(path.join(dir, d.name), r);
    }
  };
  visit(root, '');
  return out;
}

interface LaneResult {
  kills: number;
  problems: string[];
  reports: number;
  leftovers: number;
}

async function lane(script: string, root: string, seed0: number): Promise<LaneResult> {
  const last = new Map<number, { path: string; v: number }>();
  const problems: string[] = [];
  let reports = 0;
  const leftoverNames = new Set<string>();
  for (let k = 0; k < KILLS_PER_LANE; k++) {
    // Through sh with a clean NODE_OPTIONS: tap's process tracking would otherwise preload itself into
    // every child and triple its start-up time.
    const child = spawn(
      '/bin/sh',
      ['-c', 'unset NODE_OPTIONS; exec "$0" "$@"', process.execPath, script, root, String(seed0 + k)],
      {
        env: { PATH: process.env.PATH ?? '', EXOCORTEX_NATIVE_ADDON: ADDON },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let buf = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<void>((r) => child.on('exit', () => r()));
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (d: Buffer) => {
        buf += d.toString();
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line === 'ready') setTimeout(resolve, Math.random() * 45);
          const m = /^done (\d+) (\S+) (\d+)$/.exec(line);
          if (m) {
            last.set(Number(m[1]), { path: m[2], v: Number(m[3]) });
            reports++;
          }
        }
      });
      void exited.then(() => resolve());
    });
    child.kill('SIGKILL');
    await exited;
    if (stderr.trim()) problems.push(`child stderr: ${stderr.trim().slice(0, 300)}`);
    // Verify every note.
    for (let i = 0; i < NOTES; i++) {
      const found = [`notes/n-${i}.md`, `moved/n-${i}.md`].filter((p) => fs.existsSync(path.join(root, p)));
      const exp = last.get(i);
      if (found.length > 1) problems.push(`kill ${k}: note ${i} at two paths`);
      if (!exp && found.length === 0) continue;
      if (exp && found.length === 0) {
        problems.push(`kill ${k}: note ${i} (reported v${exp.v} at ${exp.path}) is missing`);
        continue;
      }
      const parsed = parseNote(fs.readFileSync(path.join(root, found[0])));
      if (!parsed || parsed.note !== i) {
        problems.push(`kill ${k}: note ${i} at ${found[0]} is torn or foreign`);
        continue;
      }
      if (exp && parsed.version !== exp.v && parsed.version !== exp.v + 1)
        problems.push(`kill ${k}: note ${i} is v${parsed.version}, reported v${exp.v}`);
      if (exp && parsed.version === exp.v + 1) last.set(i, { path: found[0], v: parsed.version });
      else if (exp && found[0] !== exp.path) last.set(i, { path: found[0], v: parsed.version });
    }
    for (const n of rawNames(root)) if (path.posix.basename(n).startsWith('.exo-')) leftoverNames.add(n);
  }
  // A restarted server: nothing staged is visible through the vault, and its walk sweeps leftovers.
  const v = await openVault(root);
  const seen: string[] = [];
  for await (const e of v.walk()) seen.push(e.path);
  const listed = await v.list('', { recursive: true });
  await v.close();
  if (seen.some((p) => p.includes('.exo-')) || listed.some((e) => e.path.includes('.exo-')))
    problems.push('a staging name is visible through the vault');
  const remaining = rawNames(root).filter((n) => path.posix.basename(n).startsWith('.exo-'));
  if (remaining.length) problems.push(`staging names left on disk after the sweep: ${remaining.join(', ')}`);
  return { kills: KILLS_PER_LANE, problems, reports, leftovers: leftoverNames.size };
}

t.test('SIGKILL mid-write never leaves a torn, lost or staged note', async (t) => {
  const script = await bundleFixture('vault-crash-writer.ts', path.join(tmp, 'writer.mjs'));
  const results = await Promise.all(
    Array.from({ length: LANES }, (_, l) => {
      const root = path.join(tmp, `vault-${l}`);
      fs.mkdirSync(root);
      return lane(script, root, 1000 * (l + 1));
    }),
  );
  const kills = results.reduce((a, r) => a + r.kills, 0);
  const reports = results.reduce((a, r) => a + r.reports, 0);
  const leftovers = results.reduce((a, r) => a + r.leftovers, 0);
  const problems = results.flatMap((r) => r.problems);
  t.comment(
    `crash suite: ${kills} SIGKILLs, ${reports} completed operations reported, ${problems.length} problems, ${leftovers} distinct staging names a kill left on disk (never visible through the vault; swept by the next walk)`,
  );
  t.ok(kills >= 200, `${kills} kills`);
  t.ok(reports > kills, 'the children made progress between kills');
  t.same(problems.slice(0, 20), [], 'every note old-or-new in full, nothing reported lost, nothing staged visible');
});
