// Every documented setting can be set from the environment, including a family's whose section the
// config file does not mention; a variable that names no setting of the host or any family is refused.
import t from 'tap';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { SettingsError } from '../../../src/host/settings/load.js';

t.test('EXO_SEARCH_RRF_K reaches the search family without a search section in the file', async (t) => {
  const server = await startTestServer({ env: { EXO_SEARCH_RRF_K: '31', EXO_TASKS_LIST_CAP: '7' } });
  t.teardown(() => server.close());
  const settingsOf = (family: string) =>
    server.host.manager.registry.generations.get(family)?.settings as Record<string, Record<string, unknown>>;
  t.equal(settingsOf('search').search.rrfK, 31);
  t.equal(settingsOf('tasks').tasks.listCap, 7);
});

t.test('a variable that names no setting is refused by name', async (t) => {
  const err = await startTestServer({ env: { EXO_SEARCH_RRF_KAY: '31' } }).then(
    (s) => s.close().then(() => undefined),
    (e: unknown) => e,
  );
  t.ok(err instanceof SettingsError, String(err));
  t.match((err as SettingsError).problems.join('\n'), /EXO_SEARCH_RRF_KAY matches no setting/);
});
