// Event-loop stalls while the real server (all built-in families, embedded PGlite) writes, reads and indexes
// multi-megabyte notes: a 2.4 MB note of 50,000 tasks and a 6.9 MB note of 200,000 lines (issue 35). During
// each call perf_hooks' monitorEventLoopDelay gives the event loop's p99 and max delay, a 10 ms interval timer
// its worst lateness, and a second client reads a tiny note in a loop (its slowest answer). Prints
// `name: value unit`.
// Usage: node --import tsx bench/hostile-note-stalls.ts [tasks|lines|planted]
import { cpus } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startTestServer } from '../src/host/testing/harness.js';

const tasks = Array.from(
  { length: 50_000 },
  (_, i) => `- [ ] task number ${i} with some words [[Link${i % 100}]] #t${i % 50}`,
).join('\n');
const lines = Array.from({ length: 200_000 }, (_, i) => `line ${i} lorem ipsum dolor sit amet`).join('\n');
const only = process.argv[2];
console.log(`# ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}`);
const server = await startTestServer({ config: {}, files: { 'Tiny.md': '# Tiny\na small note\n' } });
const client = await server.connect();
const other = await server.connect();
let worst = 0;
let last = performance.now();
const tick = setInterval(() => {
  const now = performance.now();
  worst = Math.max(worst, now - last - 10);
  last = now;
}, 10);
const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });
async function measure(name: string, f: () => Promise<unknown>): Promise<void> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  let done = false;
  let tinyWorst = 0;
  let tinyReads = 0;
  // Another caller's small read, over and over while the big call runs: its slowest answer.
  const tiny = (async () => {
    while (!done) {
      const t = performance.now();
      await other.callTool({ name: 'read_note', arguments: { path: 'Tiny' } });
      tinyWorst = Math.max(tinyWorst, performance.now() - t);
      tinyReads++;
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  worst = 0;
  last = performance.now();
  histogram.enable();
  const t0 = performance.now();
  await f();
  const took = performance.now() - t0;
  histogram.disable();
  done = true;
  await tiny;
  const ms = (ns: number) => (ns / 1e6).toFixed(0);
  console.log(`${name} took: ${took.toFixed(0)} ms`);
  console.log(`${name} worst stall: ${worst.toFixed(0)} ms`);
  console.log(`${name} loop delay p99: ${ms(histogram.percentile(99))} ms`);
  console.log(`${name} loop delay max: ${ms(histogram.max)} ms`);
  console.log(`${name} tiny read_note worst: ${tinyWorst.toFixed(0)} ms (${tinyReads} reads)`);
}
await call('read_note', { path: 'warm-up' });
await other.callTool({ name: 'read_note', arguments: { path: 'Tiny' } });
await new Promise((r) => setTimeout(r, 3_000));
if (!only || only === 'tasks') {
  await measure('create_note 2.4 MB tasks', () =>
    call('create_note', { path: 'Tasks', content: `# Tasks\n${tasks}\n` }),
  );
  await measure('read_note 2.4 MB tasks', () => call('read_note', { path: 'Tasks' }));
  await measure('get_note_outline 2.4 MB tasks', () => call('get_note_outline', { path: 'Tasks' }));
}
if (!only || only === 'lines') {
  await measure('create_note 6.9 MB lines', () => call('create_note', { path: 'Lines', content: lines }));
  await measure('read_note 6.9 MB lines', () => call('read_note', { path: 'Lines' }));
}
if (!only || only === 'planted') {
  await measure('index planted 2.4 MB tasks', async () => {
    writeFileSync(
      path.join(server.vaultDir, 'Planted.md'),
      `# P\n${tasks.replaceAll('task number', 'planted task')}\n`,
    );
    for (let i = 0; i < 600; i++) {
      const r = await call('search', { query: 'planted task 4242' });
      if (JSON.stringify(r.structuredContent ?? {}).includes('Planted')) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  });
}
clearInterval(tick);
await server.close();
