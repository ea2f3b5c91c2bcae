// The replicas fault scenario (src/host/testing/replicas-scenario.ts) with every fault: replicas.test.ts's
// kill -9, cut lease connection and SIGSTOP, plus a PostgreSQL restart and kill -9 of a forwarding process
// holding a listen stream, a multi-round-trip request across processes and a rate limit across a failover.
import t from 'tap';
import { replicasSkip, runReplicasScenario } from '../../../src/host/testing/replicas-scenario.js';

// Minutes of faults and quiescence: past tap's default per-file limit.
t.setTimeout(1_500_000);

t.test('three processes, one PostgreSQL, HAProxy in front: every fault loses nothing', { skip: replicasSkip() }, (t) =>
  runReplicasScenario(t, { extended: true }),
);
