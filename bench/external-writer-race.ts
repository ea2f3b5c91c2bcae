// bench/external-writer-race: 4 agents doing read_note → edit_note(append, expected_hash) through the real
// server (in this process) while one outside program (its own process) writes the same note, once by temp
// file + rename and once by O_APPEND. Prints, per run, the outside writes missing from the note afterwards
// (the figure that must be 0), how many outside writes there were, and how the agents fared.
// Usage: tsx bench/external-writer-race.ts [modes=rename,append,none]   Env: BENCH_SECONDS (12), BENCH_RUNS (1).
import { runExternalWriterRace, type OutsideWriterMode } from '../src/host/testing/external-writer-race.js';
import { machine } from './lib/setup.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 12);
const RUNS = Number(process.env.BENCH_RUNS ?? 1);
const modes = (process.argv[2] ?? 'rename,append,none').split(',') as OutsideWriterMode[];

console.log(`# ${machine()}; ${SECONDS} s per run, 4 agents, 1 outside writer, one note`);
for (let run = 1; run <= RUNS; run++) {
  for (const mode of modes) {
    const r = await runExternalWriterRace({ mode, seconds: SECONDS });
    const p = `race_${mode}_run${run}`;
    console.log(`${p}_lost_external_writes: ${r.lostExternalWrites} writes`);
    console.log(`${p}_external_writes: ${r.externalWrites} writes`);
    if (r.keptAsideWrites) console.log(`${p}_kept_aside_external_writes: ${r.keptAsideWrites} writes`);
    console.log(`${p}_agent_writes_ok: ${r.agentWritesOk} writes`);
    console.log(`${p}_agent_writes_lost: ${r.lostAgentWrites} writes`);
    console.log(`${p}_agent_stale_precondition: ${r.agentStale} calls`);
    console.log(`${p}_agent_concurrent_write: ${r.agentConcurrent} calls`);
    if (r.agentOtherErrors.length) console.log(`# ${p} other agent errors: ${r.agentOtherErrors.join(', ')}`);
  }
}
