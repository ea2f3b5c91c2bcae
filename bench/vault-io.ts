// Vault I/O benchmark: create (fsync'd, O_TMPFILE + linkat) p50/p95, replace with hash check p50, 10 KB
// read p50, and plain fs.writeFile (no fsync) plus writeFile+fsync as baselines in the same run; then the
// cost of one native call made inline (as the façade makes lookups) against the same call through libuv's
// pool (the addon's async form), as wall and process CPU time per call.
// Prints `name: value unit` lines; each figure is the median over RUNS runs.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { openVault } from '../src/host/vault/index.js';
import { loadNative, type NativeAddon } from '../src/host/vault/native.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const N = Number(process.env.BENCH_N ?? 200);
const body = Buffer.alloc(10 * 1024, 'x');

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const median = (xs: number[]) => pct(xs, 50);

async function timeEach(n: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await fn(i);
    out.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return out;
}

async function oneRun(run: number): Promise<Record<string, number>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `exo-bench-${run}-`));
  try {
    const v = await openVault(path.join(dir, 'vault'));
    await v.mkdirp('notes');
    const create = await timeEach(N, (i) => v.create(`notes/c-${i}.md`, body));
    let hash = v.contentHash(body);
    const replace = await timeEach(N, async (i) => {
      const next = Buffer.concat([body.subarray(0, body.length - 8), Buffer.from(String(i).padStart(8, '0'))]);
      const r = await v.replace('notes/c-0.md', next, { expectedHash: hash });
      hash = r.contentHash;
    });
    const read = await timeEach(N, (i) => v.readBytes(`notes/c-${i % N}.md`));
    await v.close();
    const plainDir = path.join(dir, 'plain');
    fs.mkdirSync(plainDir);
    const writeFile = await timeEach(N, (i) => fs.promises.writeFile(path.join(plainDir, `w-${i}.md`), body));
    const writeFileFsync = await timeEach(N, async (i) => {
      const fh = await fs.promises.open(path.join(plainDir, `s-${i}.md`), 'wx');
      await fh.writeFile(body);
      await fh.sync();
      await fh.close();
    });
    const readFile = await timeEach(N, (i) => fs.promises.readFile(path.join(plainDir, `w-${i}.md`)));
    return {
      vault_create_p50: median(create),
      vault_create_p95: pct(create, 95),
      vault_replace_hash_p50: median(replace),
      vault_read_10k_p50: median(read),
      fs_writeFile_p50: median(writeFile),
      fs_writeFile_fsync_p50: median(writeFileFsync),
      fs_readFile_10k_p50: median(readFile),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Per-call wall and CPU µs of statx, and of a read-only openat2 (+ close), inline vs on the pool. */
async function callCosts(): Promise<Record<string, number>> {
  const facade = loadNative()!;
  const pool = createRequire(import.meta.url)(
    path.resolve(import.meta.dirname, '../build/Release/exocortex_native.node'),
  ) as NativeAddon;
  const c = facade.constants;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'exo-bench-calls-'));
  fs.writeFileSync(path.join(dir, 'note.md'), body);
  const dfd = fs.openSync(dir, 'r');
  const calls = N * 25;
  const measure = async (fn: () => Promise<unknown>) => {
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) await fn();
    const wall = Number(process.hrtime.bigint() - t0) / 1e3 / calls;
    const cpu = process.cpuUsage(cpu0);
    return [wall, (cpu.user + cpu.system) / calls];
  };
  const out: Record<string, number> = {};
  try {
    for (const [name, n] of [
      ['inline', facade],
      ['pool', pool],
    ] as const) {
      const [sw, sc] = await measure(() => n.statx(dfd, 'note.md', c.AT_SYMLINK_NOFOLLOW, c.STATX_BASIC_STATS));
      const [ow, oc] = await measure(async () =>
        fs.closeSync(await n.openat2(dfd, 'note.md', c.O_RDONLY | c.O_NOFOLLOW, 0, c.RESOLVE_BENEATH)),
      );
      Object.assign(out, {
        [`statx_${name}_wall`]: sw,
        [`statx_${name}_cpu`]: sc,
        [`open_close_${name}_wall`]: ow,
        [`open_close_${name}_cpu`]: oc,
      });
    }
  } finally {
    fs.closeSync(dfd);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

const runs: Array<Record<string, number>> = [];
const costs: Array<Record<string, number>> = [];
for (let r = 0; r < RUNS; r++) {
  runs.push(await oneRun(r));
  costs.push(await callCosts());
}
console.log(
  `# vault-io: ${RUNS} runs x ${N} ops, 10 KB notes, ${os.tmpdir()} (${os.release()}), median of per-run figures`,
);
for (const key of Object.keys(runs[0])) console.log(`${key}: ${median(runs.map((r) => r[key])).toFixed(3)} ms`);
console.log(
  `# one native call: inline (the façade's lookups) vs the addon's async form on libuv's pool, ${N * 25} sequential calls per run`,
);
for (const key of Object.keys(costs[0]))
  console.log(`${key}: ${median(costs.map((r) => r[key])).toFixed(1)} µs per call`);
