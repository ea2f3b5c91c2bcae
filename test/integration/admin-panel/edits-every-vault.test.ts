// The panel's Agent edits page (issue 43): an administrator sees every vault's agent changes with a vault
// column (and can narrow to one vault); another user sees only their own vault's.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { usersPasswdOp } from '../../../src/host/admin/oauth-operations.js';
import { createApiKey } from '../../../src/host/auth/api-keys.js';
import { userByName } from '../../../src/host/auth/users.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

class PanelClient {
  private readonly jar = new Map<string, string>();
  constructor(private readonly base: string) {}
  async request(method: string, p: string, form?: Record<string, string>): Promise<Response> {
    const cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(this.base + p, {
      method,
      redirect: 'manual',
      headers: {
        ...(cookie ? { cookie } : {}),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      this.jar.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return res;
  }
  async signIn(user: string, password: string): Promise<Response> {
    const text = await (await this.request('GET', '/admin/sign-in')).text();
    const _csrf = /name="_csrf" value="([^"]+)"/.exec(text)![1];
    return this.request('POST', '/admin/sign-in', { _csrf, user, password, next: '/admin/' });
  }
}

t.test('an admin sees every vault’s agent edits; a user their own', async (t) => {
  const bobVault = mkdtempSync(path.join(os.tmpdir(), 'exo-bob-edits-'));
  const server = await startTestServer({
    builtinDir: null,
    config: {
      plugins: ['notes', 'change-feed', 'history'].map((f) => path.join(root, 'plugins', f)),
      oauth: { enabled: false },
      vaults: [{ name: 'bobs', path: bobVault }],
      users: [{ name: 'bob', vault: 'bobs' }],
    },
  });
  t.teardown(async () => {
    await server.close();
    rmSync(bobVault, { recursive: true, force: true });
  });
  const db = server.host.database.db;
  const ops = server.host.operations;
  await usersPasswdOp(ops, { name: 'operator', password: 'operator-password-1' });
  await usersPasswdOp(ops, { name: 'bob', password: 'bob-password-123' });
  const bobUser = (await userByName(db, 'bob'))!;
  const bobKey = (
    await createApiKey(db, { name: 'bob-agent', scope: 'readwrite', vaultId: bobUser.vaultId!, userId: bobUser.id })
  ).raw;
  const op = await server.connect({});
  const bobAgent = await server.connect({ key: bobKey });
  await op.callTool({ name: 'create_note', arguments: { path: 'operator-note', content: 'o\n' } });
  await bobAgent.callTool({ name: 'create_note', arguments: { path: 'bob-note', content: 'b\n' } });

  const admin = new PanelClient(server.url);
  t.equal((await admin.signIn('operator', 'operator-password-1')).status, 303);
  const all = await (await admin.request('GET', '/admin/edits')).text();
  t.match(all, /every vault/);
  t.match(all, /<th scope="col">Vault<\/th>/, 'a vault column');
  t.match(all, /operator-note\.md/, "the admin's own vault");
  t.match(all, /bob-note\.md/, "and bob's");
  t.match(all, /\/admin\/edits\/note\?path=bob-note\.md&amp;user=bob/, "bob's rows open as bob's vault");
  const narrowed = await (await admin.request('GET', '/admin/edits?user=bob')).text();
  t.match(narrowed, /bob-note\.md/);
  t.notMatch(narrowed, /operator-note\.md/, 'narrowed to one vault');
  const bobRevisions = await admin.request('GET', '/admin/edits/note?path=bob-note.md&user=bob');
  t.equal(bobRevisions.status, 200, "the admin opens bob's note's revisions");

  const bob = new PanelClient(server.url);
  t.equal((await bob.signIn('bob', 'bob-password-123')).status, 303);
  const own = await (await bob.request('GET', '/admin/edits')).text();
  t.match(own, /bob-note\.md/);
  t.notMatch(own, /operator-note\.md/, 'bob sees only his vault');
  t.equal((await bob.request('GET', '/admin/edits?user=operator')).status, 403);
});
