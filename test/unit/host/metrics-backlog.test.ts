// /metrics' families' health: read once per scrape and shown for every vault; each backlog a family
// declares (healthBacklog) becomes exocortex_<name>_backlog{vault}, with no sample where its fields are
// missing (the work is off in that vault). The sources are plain functions: no server.
import t from 'tap';
import { HostMetrics, type MetricsSources } from '../../../src/host/metrics/index.js';
import { backlogOf } from '../../../src/sdk/define-family.js';

t.test('backlogs per vault from one health read per scrape', async (t) => {
  let reads = 0;
  const sources: MetricsSources = {
    sessions: () => 0,
    subscriptions: () => 0,
    listenStreams: () => 0,
    vaults: () => ({}),
    workers: () => ({ threads: 1, queued: 0, completed: 0 }),
    audit: () => ({ pending: 0, written: 0, dropped: 0 }),
    pool: () => ({ total: 1, idle: 1, waiting: 0 }),
    familyHealth: async () => {
      reads++;
      return {
        main: { search: { semantic: true, queued: 3, stale: 2 }, history: { store_bytes: 10 } },
        other: { search: { semantic: false, queued: 7, stale: 0 } },
      };
    },
    backlogs: () => [
      { family: 'search', name: 'embedding', fields: ['queued', 'stale'], when: 'semantic', help: 'Notes to embed.' },
    ],
  };
  const m = new HostMetrics(sources);
  const text = (await m.render()).body;
  t.equal(reads, 1, 'one read for every gauge');
  t.match(text, /^exocortex_embedding_backlog\{vault="main"\} 5$/m, 'queued + stale of the vault');
  t.notMatch(text, /exocortex_embedding_backlog\{vault="other"\}/, 'no sample where semantic search is off');
  t.match(text, /^exocortex_family_health\{family="history",field="store_bytes",vault="main"\} 10$/m);
  t.match(text, /^exocortex_family_health\{family="search",field="semantic",vault="other"\} 0$/m);
  await m.render();
  t.equal(reads, 2, 'and one more for the next scrape');
  t.equal(backlogOf({ a: 1, b: 2 }, { fields: ['a', 'b'] }), 3);
  t.equal(backlogOf({ a: 1 }, { fields: ['a', 'b'] }), undefined, 'a missing field: no backlog');
  t.equal(backlogOf({ a: 1, on: false }, { fields: ['a'], when: 'on' }), undefined, 'off: no backlog');
  t.equal(backlogOf(undefined, { fields: ['a'] }), undefined);
});
