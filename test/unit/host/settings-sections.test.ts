// Each host settings section says whether a reload applies it: the host warns of a change that waits for a
// restart from that marking alone (restartOnlyChanges), so a new section cannot be left off a hand-kept list.
import t from 'tap';
import { HOST_KEYS, HOST_SECTIONS, hostSettingsSchema, restartOnlyChanges } from '../../../src/host/settings/schema.js';

const defaults = hostSettingsSchema.parse({});

t.test('every host key is a section that marks its reload mode', async (t) => {
  t.same([...HOST_KEYS].sort(), Object.keys(HOST_SECTIONS).sort());
  for (const [key, s] of Object.entries(HOST_SECTIONS)) t.ok(s.reload === 'live' || s.reload === 'restart', key);
});

t.test('a reload names the restart-only sections it changes, never the live ones', async (t) => {
  t.same(restartOnlyChanges(defaults, hostSettingsSchema.parse({})), [], 'nothing changed');
  const next = hostSettingsSchema.parse({ server: { port: 4711 }, reload: { watchConfig: false }, plugins: ['x'] });
  t.equal(HOST_SECTIONS.server.reload, 'restart');
  t.equal(HOST_SECTIONS.reload.reload, 'live');
  t.same(restartOnlyChanges(defaults, next), ['server']);
});

t.test('the sections restart-only today (what the host warned of before the split)', async (t) => {
  const restart = Object.entries(HOST_SECTIONS)
    .filter(([, s]) => s.reload === 'restart')
    .map(([k]) => k)
    .sort();
  t.same(restart, [
    'admin',
    'admission',
    'audit',
    'auth',
    'database',
    'index',
    'log',
    'metrics',
    'oauth',
    'server',
    'tools',
    'vault',
    'workers',
  ]);
});

t.test('a live section names the keys only a restart applies', async (t) => {
  t.equal(HOST_SECTIONS.panel.reload, 'live');
  const next = hostSettingsSchema.parse({
    panel: { enabled: false, pageSize: 77 },
    cluster: { leaseIntervalMs: 2000 },
  });
  t.same(restartOnlyChanges(defaults, next), ['cluster.leaseIntervalMs', 'panel.enabled'], 'pageSize is live');
  t.same(restartOnlyChanges(defaults, hostSettingsSchema.parse({ panel: { pageSize: 77 } })), []);
  for (const [name, s] of Object.entries(HOST_SECTIONS)) {
    const parsed = (defaults as unknown as Record<string, Record<string, unknown>>)[name]!;
    for (const key of s.restartKeys) t.ok(key in parsed, `${name}.${key} is a key of its section`);
  }
});
