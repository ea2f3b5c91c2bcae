// Event-loop stalls while the real server (all built-in families, embedded PGlite) writes, reads and indexes
// multi-megabyte notes: a 2.4 MB note of 50,000 tasks and a 6.9 MB note of 200,000 lines (issue 35). A 10 ms
// interval timer measures the worst lateness of the event loop during each call. Prints `name: value unit`.
// Usage: node --import tsx bench/hostile-note-stalls.ts [tasks|lines|planted]
import { cpus } from 'node:os';
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
const server = await startTestServer({ config: {} });
const client = await server.connect();
let worst = 0;
let last = performance.now();
const tick = setInterval(() => {
  const now = performance.now();
  worst = Math.max(worst, now - last - 10);
  last = now;
}, 10);
const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });
async function measure(name: string, f: () => Promise<unknown>): Promise<void> {
  worst = 0;
  last = performance.now();
  const t0 = performance.now();
  await f();
  console.log(`${name} took: ${(performance.now() - t0).toFixed(0)} ms`);
  console.log(`${name} worst stall: ${worst.toFixed(0)} ms`);
}
await call('read_note', { path: 'warm-up' });
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
