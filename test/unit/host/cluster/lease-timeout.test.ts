// How slow a lease statement may be before the lease connection counts as lost: 3 s at the default 500 ms rounds,
// six rounds when the operator chose rounds slower than 500 ms (the wire test engine's 10 s rounds allow 60 s).
import t from 'tap';
import { leaseQueryTimeoutMs } from '../../../../src/host/cluster/leases.js';

t.equal(leaseQueryTimeoutMs(100), 3000, 'fast rounds keep the 3 s floor');
t.equal(leaseQueryTimeoutMs(500), 3000, 'the default rounds: 3 s, as before');
t.equal(leaseQueryTimeoutMs(2000), 12_000, 'six rounds past the floor');
t.equal(leaseQueryTimeoutMs(10_000), 60_000, 'the slowest rounds the settings allow');
