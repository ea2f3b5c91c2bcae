// Fair shares among live bidders: who hands back how many vaults, from the loads a lease round reads.
import t from 'tap';
import { rebalanceSurplus } from '../../../../src/host/cluster/leases.js';

const load = (...n: number[]) => new Map(n.map((v, i) => [`p${i}`, v]));

t.test('a late joiner gets vaults: 4+0+3 moves to 3+2+2, one step at a time', async (t) => {
  t.equal(rebalanceSurplus('p0', load(4, 0, 3), 7), 1, 'the most loaded hands back its surplus past ⌈7/3⌉');
  t.equal(rebalanceSurplus('p2', load(4, 0, 3), 7), 0, 'only the most loaded moves');
  t.equal(rebalanceSurplus('p0', load(3, 1, 3), 7), 1, 'a tie goes to the lowest id: one vault, two over the least');
  t.equal(rebalanceSurplus('p2', load(3, 1, 3), 7), 0, 'the other of the tie waits');
  t.equal(rebalanceSurplus('p0', load(3, 2, 2), 7), 0, '3+2+2 is balanced: a difference of one never moves');
  t.equal(rebalanceSurplus('p0', load(7, 0, 0), 7), 4, 'a first process hands back everything past its share at once');
});

t.test('nothing moves without another live bidder under its share', async (t) => {
  t.equal(rebalanceSurplus('p0', load(5), 5), 0, 'alone');
  t.equal(rebalanceSurplus('p0', load(0, 3), 3), 0, 'nothing owned, nothing handed back');
  t.equal(rebalanceSurplus('p0', load(2, 2, 2), 6), 0, 'even shares');
  t.equal(rebalanceSurplus('p1', load(2, 3, 2), 7), 0, 'at its share with others within one');
});
