// The relay's card (settings/relay-card.ts): a relay reads its three settings from the card the first relay
// of the same config wrote, and from the file again once anything they derive from changed; a card never
// holds a database URL; a server URL in EXO_DATABASE_URL (it may carry a password) makes no card.
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { relayCardsFile, relaySettings } from '../../../src/host/settings/relay-card.js';
import { loadRelaySettings } from '../../../src/host/settings/relay.js';

function setUp(t: { teardown: (fn: () => void) => void }) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-relay-card-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'config.yaml');
  const env: NodeJS.ProcessEnv = { XDG_CACHE_HOME: path.join(dir, 'cache') };
  return { dir, file, env, cards: relayCardsFile(env) };
}

/** Rewrites one card's vault in place: a later answer with it came from the card, not from the file. */
function markCard(cards: string): void {
  const all = JSON.parse(readFileSync(cards, 'utf8')) as Array<{ settings: { vaultPath: string } }>;
  for (const c of all) c.settings.vaultPath = '/from/the/card';
  writeFileSync(cards, JSON.stringify(all));
}

t.test(
  'relay-card.reuse: the second relay of a config reads the card; an edit of the file is read again',
  async (t) => {
    const { dir, file, env, cards } = setUp(t);
    writeFileSync(file, 'vault:\n  path: ./notes\ndatabase:\n  url: pglite:./state/db\n');
    const first = await relaySettings({ file, cwd: dir, env });
    t.same(first, loadRelaySettings({ file, cwd: dir, env }), 'the first relay reads the file');
    t.equal(statSync(cards).mode & 0o777, 0o600, "the cards are the user's own");
    markCard(cards);
    t.equal(
      (await relaySettings({ file, cwd: dir, env })).vaultPath,
      '/from/the/card',
      'the next relay reads the card',
    );

    writeFileSync(file, 'vault:\n  path: ./other\ndatabase:\n  url: pglite:./state/db\n');
    t.equal((await relaySettings({ file, cwd: dir, env })).vaultPath, path.join(dir, 'other'), 'an edited file');
    markCard(cards);
    const later = new Date(Date.now() + 5_000);
    utimesSync(file, later, later);
    t.equal(
      (await relaySettings({ file, cwd: dir, env })).vaultPath,
      path.join(dir, 'other'),
      'a touched file (same bytes) is read again',
    );
    markCard(cards);
    const elsewhere = mkdtempSync(path.join(os.tmpdir(), 'exo-relay-card-cwd-'));
    t.teardown(() => rmSync(elsewhere, { recursive: true, force: true }));
    t.equal(
      (await relaySettings({ file, cwd: elsewhere, env })).vaultPath,
      path.join(elsewhere, 'other'),
      'another working directory (what relative paths resolve against)',
    );
    t.equal(
      (await relaySettings({ file, cwd: dir, env: { ...env, EXO_VAULT_PATH: '/v' } })).vaultPath,
      '/v',
      'an EXO_ variable of a key',
    );
    t.equal(
      (await relaySettings({ file, cwd: dir, env: { ...env, EXO_VAULT_NAME: 'Named by env' } })).vaultName,
      'Named by env',
      'the vault name from the environment',
    );
  },
);

t.test(
  'relay-card.secrets: no database URL on a card, and no card for a server URL from the environment',
  async (t) => {
    const { dir, file, env, cards } = setUp(t);
    writeFileSync(file, 'database:\n  url: postgres://u:file-secret@127.0.0.1/x\nadmin:\n  socketPath: ./admin.sock\n');
    const settings = await relaySettings({ file, cwd: dir, env });
    t.equal(settings.socketPath, path.join(dir, 'admin.sock'));
    t.notMatch(readFileSync(cards, 'utf8'), /file-secret|postgres:/, 'the card holds derived paths only');

    rmSync(cards);
    const withUrl = { ...env, EXO_DATABASE_URL: 'postgres://u:env-secret@127.0.0.1/x' };
    t.equal((await relaySettings({ file, cwd: dir, env: withUrl })).socketPath, path.join(dir, 'admin.sock'));
    t.throws(() => statSync(cards), { code: 'ENOENT' }, 'no card is written');
  },
);

t.test('relay-card.refusals: a broken card file is passed over; a broken config is still refused', async (t) => {
  const { dir, file, env, cards } = setUp(t);
  writeFileSync(file, 'vault:\n  path: ./notes\n');
  await relaySettings({ file, cwd: dir, env });
  writeFileSync(cards, '[{"key": 1}, "not a card", {"key": "x", "settings": {"vaultPath": 3}}');
  t.equal((await relaySettings({ file, cwd: dir, env })).vaultPath, path.join(dir, 'notes'), 'malformed JSON');
  writeFileSync(cards, '[{"key": 1}, "not a card", {"key": "x", "settings": {"vaultPath": 3}}]');
  t.equal((await relaySettings({ file, cwd: dir, env })).vaultPath, path.join(dir, 'notes'), 'entries of no shape');
  writeFileSync(file, 'vault:\n  path: 3\n');
  await t.rejects(relaySettings({ file, cwd: dir, env }), { name: 'SettingsError', message: /vault\.path/ });
  await t.rejects(relaySettings({ file: path.join(dir, 'missing.yaml'), cwd: dir, env }), { name: 'SettingsError' });
});
