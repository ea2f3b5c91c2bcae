// Vault I/O benchmark: create (fsync'd, O_TMPFILE + linkat) p50/p95, replace with hash check p50, 10 KB
// read p50, and plain fs.writeFile (no fsync) plus writeFile+fsync as baselines in the same run.
// Prints `name: value unit` lines; each figure is the median over RUNS runs.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openVault } from '../src/host/vault/index.js';

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
      vault_create_p50: median(create), vault_create_p95: pct(create, 95), vault_replace_hash_p50: median(replace), vault_read_10k_p50: median(read),
      fs_writeFile_p50: median(writeFile), fs_writeFile_fsync_p50: median(writeFileFsync), fs_readFile_10k_p50: median(readFile),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const runs: Array<Record<string, number>> = [];
for (let r = 0; r < RUNS; r++) runs.push(await oneRun(r));
console.log(`# vault-io: ${RUNS} runs x ${N} ops, 10 KB notes, ${os.tmpdir()} (${os.release()}), median of per-run figures`);
for (const key of Object.keys(runs[0])) console.log(`${key}: ${median(runs.map((r) => r[key])).toFixed(3)} ms`);
