// The replicas fault scenario (src/host/testing/replicas-scenario.ts): three processes on one PostgreSQL
// behind HAProxy; writers of both protocol eras, an outside editor and listen streams; kill -9 of an
// owner, its lease connection cut, SIGSTOP, a PostgreSQL restart and kill -9 of a forwarding process
// holding a listen stream; then every oracle. EXOCORTEX_CLUSTER_FAULTS=basic leaves out the restart, the
// forwarder's death, the multi-round request and the failover's rate limit (a shorter local run).
import t from 'tap';
import { replicasSkip, runReplicasScenario } from '../../../src/host/testing/replicas-scenario.js';

const extended = process.env.EXOCORTEX_CLUSTER_FAULTS !== 'basic';
// Minutes of faults and quiescence: past tap's default per-file limit.
t.setTimeout(1_500_000);

t.test('three processes, one PostgreSQL, HAProxy in front: faults lose nothing', { skip: replicasSkip() }, (t) =>
  runReplicasScenario(t, { extended }),
);
