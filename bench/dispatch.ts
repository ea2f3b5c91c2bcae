// bench/dispatch: what the host adds to one tool call, without a transport: the dispatcher's whole path
// (admission, the argument screen and validation, the deadline, the handler's context, the output check, the
// result budget's measure, the audit row) around the fixture family's `echo`, called in process one call after
// another, against the same tool's handler and render alone (what a bare SDK server runs for it); µs a call,
// median of rounds, and the main thread's garbage-collection pauses per call during the dispatcher's rounds.
// A figure here moves by a microsecond or two between runs where bench/roundtrip's ratios move by tens of percent:
// the place to judge a change to the per-call path (one worth a few microseconds), before bench/roundtrip does.
// Usage: tsx bench/dispatch.ts
// Env: CALLS (20000 a round), ROUNDS (5)
import { spawnSync } from 'node:child_process';
import { PerformanceObserver } from 'node:perf_hooks';
import { credentialsOf } from '../src/host/http/listener.js';
import { startTestServer } from '../src/host/testing/harness.js';
import { ECHO_FAMILY, machine, median, serverLoader } from './lib/setup.js';

const CALLS = Number(process.env.CALLS ?? 20_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const UNDER_LOADER = 'EXOCORTEX_BENCH_DISPATCH_CHILD';

// Timed as the server runs, under the checkout's loader (as tsc emits it): tsx wraps every function made at
// run time in a naming call, a per-call cost the compiled server never pays.
if (!process.env[UNDER_LOADER]) {
  const r = spawnSync(process.execPath, ['--import', serverLoader(), import.meta.filename], {
    stdio: 'inherit',
    env: { ...process.env, [UNDER_LOADER]: '1' },
  });
  process.exit(r.status ?? 1);
}

const server = await startTestServer({
  http: false,
  config: {
    plugins: [ECHO_FAMILY],
    log: { level: 'warn' },
    admission: { callsPerMinute: 1_000_000_000, writesPerMinute: 1_000_000_000 },
  },
});
try {
  const principal = await credentialsOf(server.host).verify(server.key);
  const dispatcher = server.host.dispatcher;
  const entry = server.host.manager.registry.findTool('echo');
  if (!entry) throw new Error('the echo fixture family did not load');
  const args = { text: 'ping' };
  const viaHost = async () => {
    const r = (await dispatcher.call(principal, 'echo', args)) as { isError?: boolean; content: unknown };
    if (r.isError) throw new Error(JSON.stringify(r.content));
  };
  // The baseline: the handler with a context made once, and its render, as a bare server would call them.
  const ctx = dispatcher.contextFor(entry.generation, principal, new AbortController().signal);
  const module = entry.tool.module as {
    handler(input: unknown, ctx: unknown): unknown;
    render(output: unknown): string;
  };
  const bare = async () => {
    const out = await module.handler({ ...args }, ctx);
    JSON.stringify({ content: [{ type: 'text', text: module.render(out) }], structuredContent: out });
  };

  let gcMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcMs += e.duration;
  });
  const round = async (call: () => Promise<void>): Promise<number> => {
    const t0 = performance.now();
    for (let i = 0; i < CALLS; i++) await call();
    return ((performance.now() - t0) * 1000) / CALLS;
  };
  // Warm-up: V8 compiles the path over its first calls.
  await round(viaHost);
  await round(viaHost);
  await round(bare);
  const host: number[] = [];
  const alone: number[] = [];
  let hostGcMs = 0;
  for (let r = 0; r < ROUNDS; r++) {
    gcMs = 0;
    gc.observe({ entryTypes: ['gc'] });
    host.push(await round(viaHost));
    // The observer hears of collections a turn later: the round's calls never leave the microtask queue.
    await new Promise((resolve) => setTimeout(resolve, 50));
    gc.disconnect();
    hostGcMs += gcMs;
    alone.push(await round(bare));
  }
  const spread = (xs: number[]) => `${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}`;
  console.log(`# machine: ${machine()}; in process, ${CALLS} sequential calls a round, median of ${ROUNDS}`);
  console.log(`dispatch_call_us: ${median(host).toFixed(1)} µs (${spread(host)}) (ToolDispatcher.call, echo)`);
  console.log(
    `handler_only_us: ${median(alone).toFixed(1)} µs (${spread(alone)}) (the same tool's handler and render)`,
  );
  console.log(`host_per_call_us: ${(median(host) - median(alone)).toFixed(1)} µs (what the host adds)`);
  console.log(
    `dispatch_gc_us: ${((hostGcMs * 1000) / (CALLS * ROUNDS)).toFixed(1)} µs a call (main-thread GC pauses in the dispatcher's rounds)`,
  );
} finally {
  await server.close();
}
