// The replicas fault scenario (src/host/testing/replicas-scenario.ts): three processes on one PostgreSQL
// behind HAProxy, writers, an outside editor and listen streams, with kill -9 of an owner, its lease
// connection cut and SIGSTOP, then every oracle. replicas-extended.test.ts adds the PostgreSQL restart and
// the death of a forwarding process holding a listen stream.
import t from 'tap';
import { replicasSkip, runReplicasScenario } from '../../../src/host/testing/replicas-scenario.js';

// Minutes of faults and quiescence: past tap's default per-file limit.
t.setTimeout(900_000);

t.test('three processes, one PostgreSQL, HAProxy in front: faults lose nothing', { skip: replicasSkip() }, (t) =>
  runReplicasScenario(t, { extended: false }),
);
