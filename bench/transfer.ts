// Transfer and file-read figures on this machine: upload throughput of a 25 MB file through PUT
// /transfer/upload vs `cp` of the same file, and read_file p50 for a 10 MB binary. Prints `name: value unit`.
// Usage: tsx bench/transfer.ts   (starts a real host on 127.0.0.1 with a temp vault and embedded PGlite)
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer } from '../src/host/testing/harness.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const UPLOAD_BYTES = 25 * 1000 * 1000;
const READ_BYTES = 10 * 1000 * 1000;

const work = mkdtempSync(path.join(tmpdir(), 'exo-bench-transfer-'));
const source = path.join(work, 'upload.bin');
const payload = randomBytes(UPLOAD_BYTES);
writeFileSync(source, payload);
const server = await startTestServer({
  builtinDir: null,
  config: {
    plugins: [path.join(ROOT, 'plugins/files'), path.join(ROOT, 'plugins/transfer')],
    transfer: { publicUrl: 'https://bench.example.org', maxUploadBytes: 26 * 1024 * 1024, byteRequestsPerMinute: 1000 },
  },
  files: { 'bench/read.bin': randomBytes(READ_BYTES) },
});
const client = await server.connect();

function put(token: string, body: Buffer): Promise<number> {
  const u = new URL(server.url);
  return new Promise((resolve, reject) => {
    const r = http.request(
      {
        method: 'PUT',
        host: u.hostname,
        port: u.port,
        path: '/transfer/upload',
        headers: { authorization: `Bearer ${token}`, 'content-length': body.length },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    r.on('error', reject);
    r.end(body);
  });
}

console.log(`machine: ${cpus()[0]?.model ?? 'unknown'} x${cpus().length}, node ${process.version}`);
console.log(`data: random bytes, ${UPLOAD_BYTES} upload, ${READ_BYTES} read; vault and tmp on ${tmpdir()}`);
let bestUpload = Infinity;
let bestCp = Infinity;
for (let i = 0; i < ROUNDS; i++) {
  const minted = (await client.callTool({ name: 'request_upload', arguments: { path: `bench/up-${i}.bin` } }))
    .structuredContent as { url: string };
  const token = minted.url.slice(minted.url.indexOf('#') + 1);
  const t0 = performance.now();
  const status = await put(token, payload);
  const ms = performance.now() - t0;
  if (status !== 201) throw new Error(`upload answered ${status}`);
  bestUpload = Math.min(bestUpload, ms);
  const c0 = performance.now();
  execFileSync('cp', [source, path.join(server.vaultDir, `bench/cp-${i}.bin`)]);
  execFileSync('sync', ['-f', path.join(server.vaultDir, `bench/cp-${i}.bin`)]);
  bestCp = Math.min(bestCp, performance.now() - c0);
}
console.log(`transfer_upload_25mb: ${(UPLOAD_BYTES / 1e6 / (bestUpload / 1000)).toFixed(1)} MB/s`);
console.log(`cp_25mb_with_sync: ${(UPLOAD_BYTES / 1e6 / (bestCp / 1000)).toFixed(1)} MB/s`);

const reads: number[] = [];
for (let i = 0; i < Math.max(5, ROUNDS * 3); i++) {
  const t0 = performance.now();
  const r = await client.callTool({ name: 'read_file', arguments: { path: 'bench/read.bin' } });
  reads.push(performance.now() - t0);
  if (r.isError) throw new Error('read_file failed');
}
reads.sort((a, b) => a - b);
console.log(`read_file_10mb_binary_p50: ${reads[Math.floor(reads.length / 2)].toFixed(0)} ms`);
await server.close();
rmSync(work, { recursive: true, force: true });
