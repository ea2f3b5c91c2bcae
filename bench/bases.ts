// Benchmark of the bases family: query_base p50/p95 over MCP on a generated vault of BENCH_NOTES notes (frontmatter
// with numbers, dates, a status and a link; tags; body links), for a filter on a frontmatter field, a formula over
// links, and a grouped view with summaries, and each kind's first call. Prints `name: value unit` lines; a failed call
// is printed to stderr and counted (the exit code is then 1). Usage: tsx bench/bases.ts
// Env: BENCH_NOTES (default 10000), BENCH_ROUNDS (default 20), BENCH_LOG (server log level, default silent). Writes only its own temp vault.
import os from 'node:os';
import { startTestServer } from '../src/host/testing/harness.js';
import type { IndexService } from '../src/sdk/index-service.js';

const NOTES = Number(process.env.BENCH_NOTES ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const plugins = ['graph', 'bases'].map((f) => new URL(`../plugins/${f}`, import.meta.url).pathname);

const files: Record<string, string> = {};
const STATUSES = ['todo', 'doing', 'done', 'dropped'];
for (let i = 0; i < NOTES; i++) {
  const folder = `area-${i % 20}/sub-${i % 7}`;
  const day = String((i % 28) + 1).padStart(2, '0');
  const month = String((i % 12) + 1).padStart(2, '0');
  files[`${folder}/Note ${i}.md`] = [
    '---',
    `rating: ${i % 5}`,
    `status: ${STATUSES[i % 4]}`,
    `finished: 2025-${month}-${day}`,
    `owner: "[[Person ${i % 50}]]"`,
    `tags: [project, area/${i % 20}]`,
    '---',
    `# Note ${i}`,
    '',
    `See [[Note ${(i * 7) % NOTES}]], [[Note ${(i * 13 + 1) % NOTES}]] and [[Person ${i % 50}]]. #bench`,
    '',
  ].join('\n');
}
for (let p = 0; p < 50; p++) files[`people/Person ${p}.md`] = `---\nborn: ${1950 + p}\n---\n# Person ${p}\n`;

console.log(`machine: ${os.cpus()[0]?.model ?? 'unknown'} x${os.cpus().length}, node ${process.version}`);
console.log(`data: generated vault, ${NOTES} notes + 50 people, 3 links each`);
const t0 = performance.now();
const server = await startTestServer({
  builtinDir: null,
  files,
  logLevel: process.env.BENCH_LOG ?? 'silent',
  config: { plugins, index: { watch: false, reconcileSeconds: 0 } },
});
const vaultId = server.host.vaultHandle.id;
await (server.host.services.named.get('index') as IndexService).whenReady(vaultId, 3_600_000);
console.log(`index: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const client = await server.connect();

const QUERIES: Record<string, string> = {
  filter_frontmatter:
    'filters: rating >= 4 && status == "done"\nviews: [{type: table, name: T, order: [file.name, rating], limit: 50}]',
  formula_links:
    'filters: file.inFolder("area-3")\nformulas:\n  out: file.links.length\n  back: file.backlinks.length\nviews: [{type: table, name: T, order: [file.name, formula.out, formula.back], sort: [{property: formula.back, direction: DESC}], limit: 50}]',
  grouped_summaries:
    'filters: file.hasTag("project")\nformulas:\n  age: (now() - finished).days\nviews:\n  - type: table\n    name: T\n    groupBy: {property: status, direction: ASC}\n    order: [file.name, rating, formula.age]\n    summaries: {rating: Average, finished: Latest, formula.age: Median, status: Unique}\n',
};

const pct = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
let failures = 0;
for (const [name, yaml] of Object.entries(QUERIES)) {
  const times: number[] = [];
  let total = 0;
  let first = 0;
  for (let r = 0; r < ROUNDS + 2; r++) {
    const s = performance.now();
    const res = await client.callTool({ name: 'query_base', arguments: { yaml, limit: 50 } });
    const ms = performance.now() - s;
    if (r === 0) first = ms;
    if (res.isError) {
      // Reported and counted, not thrown: the run goes on, so one bad call does not hide the rest.
      failures++;
      console.error(
        `${name} round ${r} failed after ${ms.toFixed(0)} ms: ${JSON.stringify(res.content).slice(0, 600)}`,
      );
      continue;
    }
    total = (res.structuredContent as { total: number }).total;
    if (r >= 2) times.push(ms); // two warm-up rounds
  }
  // The first call of each kind also builds what later ones reuse (the record set, the link maps).
  console.log(`query_base_${name}_first: ${first.toFixed(1)} ms`);
  console.log(`query_base_${name}_p50: ${pct(times, 0.5).toFixed(1)} ms (${total} rows)`);
  console.log(`query_base_${name}_p95: ${pct(times, 0.95).toFixed(1)} ms`);
}
console.log(`query_base_failures: ${failures} calls`);
await server.close();
if (failures > 0) process.exitCode = 1;
