// bench/footprint's probe, preloaded into the measured server with `node --require` (every worker thread
// loads it too, see below): every thread answers a sample request with its V8 heap and the WebAssembly memories it created, so the
// bench can split the process's resident memory. Plain JavaScript, so it loads into the compiled build as is.
// It never changes what the server does: it only records memories and answers on a BroadcastChannel.
const { writeFileSync } = require('node:fs');
const v8 = require('node:v8');
const { isMainThread, threadId } = require('node:worker_threads');

// The worker pool makes its threads with an explicit execArgv (it keeps only TypeScript loaders), which
// would not inherit `--require`: every Worker made after this point loads the probe too.
const workerThreads = require('node:worker_threads');
const OriginalWorker = workerThreads.Worker;
workerThreads.Worker = class ProbedWorker extends OriginalWorker {
  constructor(filename, options = {}) {
    const execArgv = options.execArgv ?? process.execArgv;
    super(filename, { ...options, execArgv: execArgv.includes(__filename) ? execArgv : [...execArgv, '--require', __filename] });
  }
};
require('node:module').syncBuiltinESMExports();

const memories = [];
const keep = (memory) => {
  if (memory instanceof WebAssembly.Memory) memories.push(new WeakRef(memory));
};
const originalInstantiate = WebAssembly.instantiate;
WebAssembly.instantiate = async function instantiate(...args) {
  const result = await originalInstantiate.apply(this, args);
  const instance = result instanceof WebAssembly.Instance ? result : result.instance;
  for (const value of Object.values(instance.exports)) keep(value);
  return result;
};
const OriginalMemory = WebAssembly.Memory;
WebAssembly.Memory = new Proxy(OriginalMemory, {
  construct(target, args, newTarget) {
    const memory = Reflect.construct(target, args, newTarget);
    keep(memory);
    return memory;
  },
});

function wasmSizes() {
  const sizes = [];
  for (const ref of memories) {
    const bytes = ref.deref()?.buffer.byteLength;
    if (bytes) sizes.push(bytes);
  }
  return sizes;
}

function sample() {
  const heap = v8.getHeapStatistics();
  const usage = process.memoryUsage();
  return {
    threadId,
    main: isMainThread,
    heapPhysical: heap.total_physical_size,
    heapUsed: heap.used_heap_size,
    external: usage.external,
    // Each memory's size; only the pages it touched are resident (the bench reads those from smaps).
    wasmSizes: wasmSizes(),
    rss: usage.rss,
  };
}

const channel = new BroadcastChannel('exocortex-footprint-probe');
channel.unref();
if (isMainThread) {
  // The bench asks with SIGUSR2 and reads the answer from the file it names in FOOTPRINT_PROBE_OUT.
  const out = process.env.FOOTPRINT_PROBE_OUT;
  let pending;
  channel.onmessage = (event) => {
    if (event.data?.kind === 'sample' && pending) pending.threads.push(event.data.sample);
  };
  process.on('SIGUSR2', () => {
    pending = { at: Date.now(), threads: [sample()] };
    channel.postMessage({ kind: 'ask' });
    // Threads answer within a turn or two of their event loops; a thread busy in a long task is missed.
    setTimeout(() => {
      if (out) writeFileSync(out, JSON.stringify(pending));
      pending = undefined;
    }, 300).unref();
  });
} else {
  channel.onmessage = (event) => {
    if (event.data?.kind === 'ask') channel.postMessage({ kind: 'sample', sample: sample() });
  };
}
