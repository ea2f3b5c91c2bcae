// The /admin panel over plain HTTP (no browser): sign-in with CSRF, a strict CSP, Secure/HttpOnly/
// SameSite=Strict cookies (publicUrl is https here), a non-admin kept to their own pages, an expired
// session and a disabled user's session refused. One server for the whole file.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { usersDisableOp } from '../../../src/host/admin/account-operations.js';
import { usersPasswdOp } from '../../../src/host/admin/oauth-operations.js';
import rollupMigration from '../../../migrations/0008-usage-rollups.js';
import { sql } from 'kysely';
import { AuditWriter } from '../../../src/host/audit/batch-writer.js';

/** A cookie jar over fetch, the way a browser without JavaScript keeps a session. */
class PanelClient {
  readonly jar = new Map<string, string>();
  setCookies: string[] = [];
  constructor(readonly base: string) {}
  async request(
    method: string,
    p: string,
    form?: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    const cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(this.base + p, {
      method,
      redirect: 'manual',
      headers: {
        ...(cookie ? { cookie } : {}),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...headers,
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    this.setCookies = res.headers.getSetCookie();
    for (const c of this.setCookies) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      const value = pair.slice(i + 1);
      if (value === '' || /Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(c)) this.jar.delete(pair.slice(0, i));
      else this.jar.set(pair.slice(0, i), value);
    }
    return res;
  }
  async csrf(p = '/admin/sign-in'): Promise<string> {
    const text = await (await this.request('GET', p)).text();
    return /name="_csrf" value="([^"]+)"/.exec(text)![1];
  }
  async signIn(user: string, password: string): Promise<Response> {
    const _csrf = await this.csrf();
    return this.request('POST', '/admin/sign-in', { _csrf, user, password, next: '/admin/' });
  }
}

t.test('panel over plain HTTP', async (t) => {
  const bobVault = mkdtempSync(path.join(os.tmpdir(), 'exo-bob-'));
  const carolVault = mkdtempSync(path.join(os.tmpdir(), 'exo-carol-'));
  const server = await startTestServer({
    files: {
      'Projects/Panel plan.md': '# Panel plan\n\nThe zebra panel ships soon.\n\n## Next steps\n\nmore\n',
      'Hostile.md': [
        '# Hostile',
        '',
        'See [[Panel plan]], [[Panel plan|the plan]], [[Panel plan#Next steps]] and [[Nowhere]].',
        '',
        '![[Panel plan]] ![[diagram.png]]',
        '',
        '- [ ] write the docs',
        '- [x] sign-in',
        '',
        '<script>alert(1)</script> <img src=x onerror=alert(2)>',
        '',
        'A [click](javascript:alert%283%29) and [[Panel plan]] <b>inline</b>.',
        '',
        '[[Panel plan|<b onclick=alert(4)>x</b>]] `[[Not a link]]`',
        '',
      ].join('\n'),
    },
    config: {
      // notes and search only (search/fetch link to the panel); the rest stay off to start fast.
      families: Object.fromEntries(
        ['files', 'graph', 'tasks', 'transfer', 'change-feed', 'history', 'bases'].map((f) => [f, { enabled: false }]),
      ),
      server: { publicUrl: 'https://exocortex.invalid' },
      oauth: { enabled: false },
      panel: { sessionTtlSeconds: 3600 },
      vaults: [{ name: 'bobs', path: bobVault }],
      users: [{ name: 'bob', vault: 'bobs' }],
    },
  });
  t.teardown(async () => {
    await server.close();
    rmSync(bobVault, { recursive: true, force: true });
    rmSync(carolVault, { recursive: true, force: true });
  });
  const ops = server.host.operations;
  await usersPasswdOp(ops, { name: 'operator', password: 'operator-password-1' });
  await usersPasswdOp(ops, { name: 'bob', password: 'bob-password-123' });

  const admin = new PanelClient(server.url);
  const first = await admin.request('GET', '/admin/');
  t.equal(first.status, 303, 'an anonymous visit is sent to sign in');
  t.equal(first.headers.get('location'), '/admin/sign-in?next=%2Fadmin%2F');

  const signInPage = await admin.request('GET', '/admin/sign-in');
  const csp = signInPage.headers.get('content-security-policy') ?? '';
  t.match(csp, /default-src 'none'/, 'CSP denies by default');
  t.match(csp, /script-src 'self'(;|$)/, 'scripts only from the panel itself');
  t.match(csp, /frame-ancestors 'none'/);
  t.notMatch(csp, /unsafe-inline|unsafe-eval|\*/, 'nothing inline, no eval, no wildcard');
  const csrfCookie = admin.setCookies.find((c) => c.startsWith('exo_panel_csrf='));
  t.ok(csrfCookie, 'the CSRF secret is a cookie');
  t.match(csrfCookie!, /; HttpOnly/);
  t.match(csrfCookie!, /; SameSite=Strict/);
  t.match(csrfCookie!, /; Secure/, 'Secure because publicUrl is https');

  const noCsrf = await admin.request('POST', '/admin/sign-in', { user: 'operator', password: 'operator-password-1' });
  t.equal(noCsrf.status, 403, 'a sign-in without the CSRF token is refused');
  t.notOk(admin.jar.has('exo_panel'), 'and starts no session');

  const wrong = await admin.signIn('operator', 'not-the-password');
  t.equal(wrong.status, 401, 'a wrong password is refused');

  const ok = await admin.signIn('operator', 'operator-password-1');
  t.equal(ok.status, 303);
  t.equal(ok.headers.get('location'), '/admin/');
  const session = admin.setCookies.find((c) => c.startsWith('exo_panel='))!;
  t.match(session, /; Path=\/admin/);
  t.match(session, /; HttpOnly/);
  t.match(session, /; SameSite=Strict/);
  t.match(session, /; Secure/);
  const expires = Date.parse(/; Expires=([^;]+)/.exec(session)?.[1] ?? '');
  t.ok(
    expires > Date.now() + 3500_000 && expires < Date.now() + 3700_000,
    'the session cookie expires after panel.sessionTtlSeconds',
  );
  t.notMatch(session, /exo_[A-Za-z0-9]{6}/, 'it is no MCP bearer token');

  const overview = await admin.request('GET', '/admin/');
  t.equal(overview.status, 200);
  const text = await overview.text();
  t.match(text, /<h1>Overview<\/h1>/);
  t.match(text, />bobs</, 'an admin sees every vault');
  t.match(text, /operator \(admin\)/);

  // A signed-in POST without the token: refused before it does anything.
  const keysBefore = (
    await server.host.database.db.selectFrom('api_keys').select('id').where('revoked_at', 'is', null).execute()
  ).length;
  const forged = await admin.request('POST', '/admin/credentials/keys', { name: 'forged', scope: 'readwrite' });
  t.equal(forged.status, 403, 'a CSRF-less POST is refused');
  const forgedBadToken = await admin.request('POST', '/admin/credentials/keys', {
    name: 'forged',
    scope: 'readwrite',
    _csrf: 'x'.repeat(40),
  });
  t.equal(forgedBadToken.status, 403, 'so is one with a wrong token');
  t.equal(
    (await server.host.database.db.selectFrom('api_keys').select('id').where('revoked_at', 'is', null).execute())
      .length,
    keysBefore,
    'no key was minted',
  );

  // A non-admin: their own vault only, never another user's pages.
  const bob = new PanelClient(server.url);
  t.equal((await bob.signIn('bob', 'bob-password-123')).status, 303);
  const bobOverview = await (await bob.request('GET', '/admin/')).text();
  t.match(bobOverview, />bobs</);
  t.notMatch(
    bobOverview,
    new RegExp(`>${server.host.settings.host.vault.name}<`),
    'bob does not see the operator vault',
  );
  t.notMatch(bobOverview, /Danger zone/, 'a non-admin is not offered the danger zone');
  for (const p of [
    '/admin/credentials?user=operator',
    '/admin/usage?user=operator',
    '/admin/danger',
    '/admin/danger/disable?user=operator',
    '/admin/users',
    '/admin/users/edit?user=operator',
  ]) {
    t.equal((await bob.request('GET', p)).status, 403, `bob is refused ${p}`);
  }
  t.equal(
    (
      await bob.request('POST', '/admin/danger/disable', {
        _csrf: await bob.csrf('/admin/credentials'),
        user: 'operator',
      })
    ).status,
    403,
    'a non-admin cannot disable anyone',
  );
  t.equal(
    (
      await bob.request('POST', '/admin/users/passwd', {
        _csrf: await bob.csrf('/admin/credentials'),
        user: 'operator',
        password: 'bob-owns-you-now',
      })
    ).status,
    403,
    "a non-admin cannot set anyone's password",
  );
  t.equal(
    (
      await server.host.database.db
        .selectFrom('users')
        .select('disabled_at')
        .where('name', '=', 'operator')
        .executeTakeFirstOrThrow()
    ).disabled_at,
    null,
    'the operator is still enabled',
  );
  const bobCreds = await (await bob.request('GET', '/admin/credentials')).text();
  t.notMatch(bobCreds, /test-rw/, "bob's credentials page lists none of the operator's keys");
  const opKey = await server.host.database.db
    .selectFrom('api_keys')
    .select('id')
    .where('name', '=', 'test-rw')
    .executeTakeFirstOrThrow();
  const steal = await bob.request('POST', '/admin/credentials/keys/revoke', {
    _csrf: await bob.csrf('/admin/credentials'),
    id: String(opKey.id),
  });
  t.equal(steal.status, 404, "bob cannot revoke the operator's key");
  t.ok(
    await server.host.database.db
      .selectFrom('api_keys')
      .select('id')
      .where('id', '=', opKey.id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst(),
    'the key is still active',
  );

  // Index jobs: everyone on their own vault; admins on any vault (a selector); anyone else refused.
  const opVault = server.host.settings.host.vault.name;
  const bobIndex = await (await bob.request('GET', '/admin/index')).text();
  t.notMatch(bobIndex, /<select[^>]*name="vault"/, 'a non-admin is offered no vault selector');
  t.match(
    bobIndex,
    /id="jobs-restart">Jobs run inside the server process started [^<]*a restart ends a running job/,
    'the page says a restart ends jobs',
  );
  const bobCsrf = await bob.csrf('/admin/index');
  for (const [action, extra] of [
    ['/admin/index/reindex', {}],
    ['/admin/index/search-command', { command: 'rebuild-keyword' }],
    ['/admin/index/search-command', { command: 'reembed' }],
  ] as const) {
    t.equal(
      (await bob.request('POST', action, { _csrf: bobCsrf, vault: opVault, ...extra })).status,
      403,
      `bob may not start ${action} ${'command' in extra ? extra.command : ''} on the operator's vault`,
    );
  }
  t.equal(
    (await bob.request('POST', '/admin/index/search-command', { _csrf: bobCsrf, command: 'reembed', vault: '*' }))
      .status,
    403,
    'nor on every vault',
  );
  const waitJob = async (c: PanelClient, location: string) => {
    for (let i = 0; i < 200; i++) {
      const text = await (await c.request('GET', location)).text();
      if (!/job-state">running/.test(text)) return text;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`${location} still running`);
  };
  const own = await bob.request('POST', '/admin/index/reindex', { _csrf: bobCsrf });
  t.equal(own.status, 303, 'bob re-indexes his own vault');
  t.match(await waitJob(bob, own.headers.get('location')!), /Re-index of bobs[\s\S]*job-state">done/);
  const adminIndex = await (await admin.request('GET', '/admin/index')).text();
  t.match(
    adminIndex,
    /<select id="reindex-vault" name="vault">[\s\S]*<option value="bobs">/,
    'an admin picks the vault',
  );
  const adminCsrf = await admin.csrf('/admin/index');
  const other = await admin.request('POST', '/admin/index/reindex', { _csrf: adminCsrf, vault: 'bobs' });
  t.equal(other.status, 303);
  t.match(
    await waitJob(admin, other.headers.get('location')!),
    /Re-index of bobs[\s\S]*job-state">done/,
    "an admin re-indexes bob's vault",
  );
  const kw = await admin.request('POST', '/admin/index/search-command', {
    _csrf: adminCsrf,
    command: 'rebuild-keyword',
    vault: 'bobs',
  });
  t.match(
    await waitJob(admin, kw.headers.get('location')!),
    /Rebuild the keyword index of vault bobs[\s\S]*rebuilt keyword vectors of \d+ notes of vault bobs/,
    "and rebuilds the keyword index of bob's vault only",
  );
  t.match(adminIndex, /<option value="search reset-embeddings">/, "an admin is offered every family's commands");
  t.notMatch(bobIndex, /family-command/, 'a non-admin is not');
  t.equal(
    (await bob.request('POST', '/admin/index/family-command', { _csrf: bobCsrf, command: 'search reembed' })).status,
    403,
    'and is refused them',
  );
  const fc = await admin.request('POST', '/admin/index/family-command', {
    _csrf: adminCsrf,
    command: 'search reembed',
  });
  t.match(
    await waitJob(admin, fc.headers.get('location')!),
    /exocortex search reembed[\s\S]*job-state">done[\s\S]*queued \d+ notes for embedding/,
    'a family command runs as a job',
  );
  t.equal(
    (await admin.request('POST', '/admin/index/family-command', { _csrf: adminCsrf, command: 'search nope' })).status,
    400,
    'an unknown command is refused',
  );

  // An expired session is refused (the row's expiry is the truth, whatever the cookie says).
  const expiring = new PanelClient(server.url);
  await expiring.signIn('operator', 'operator-password-1');
  t.equal((await expiring.request('GET', '/admin/')).status, 200);
  await server.host.database.db
    .updateTable('panel_sessions')
    .set({ expires_at: new Date(Date.now() - 1000) })
    .execute();
  const expired = await expiring.request('GET', '/admin/');
  t.equal(expired.status, 303, 'an expired session is sent to sign in again');
  t.match(expired.headers.get('location') ?? '', /^\/admin\/sign-in/);
  t.equal((await expiring.request('POST', '/admin/sign-out', { _csrf: 'x' })).status, 401, 'and cannot post');
  t.equal((await admin.request('GET', '/admin/')).status, 303, 'every expired session is refused');

  // Disabling a user ends their panel sessions at once.
  await bob.signIn('bob', 'bob-password-123');
  t.equal((await bob.request('GET', '/admin/')).status, 200);
  await server.rewriteConfig({ users: [{ name: 'bob', vault: 'bobs', disabled: true }] });
  t.equal((await bob.request('GET', '/admin/')).status, 303, "a disabled user's session has ended");
  const bobId = (
    await server.host.database.db.selectFrom('users').select('id').where('name', '=', 'bob').executeTakeFirstOrThrow()
  ).id;
  t.equal(
    (
      await server.host.database.db
        .selectFrom('panel_sessions')
        .select('token_hash')
        .where('user_id', '=', bobId)
        .execute()
    ).length,
    0,
    'their session rows are gone',
  );
  t.equal((await bob.signIn('bob', 'bob-password-123')).status, 401, 'and they cannot sign in again');
  void usersDisableOp;

  // With publicUrl https, the connector's search and fetch give the panel's note view as url.
  await server.host.index?.whenIdle();
  const client = await server.connect();
  const found = (await client.callTool({ name: 'search', arguments: { query: 'zebra panel' } })) as {
    structuredContent?: { results: Array<Record<string, string>> };
  };
  const hit = found.structuredContent!.results[0];
  t.equal(
    hit?.url,
    'https://exocortex.invalid/admin/notes/Projects/Panel%20plan.md',
    'search gives the panel note view as url',
  );
  t.match(hit?.obsidian_url, /^obsidian:\/\/open\?vault=/, 'and the obsidian:// link beside it');
  const fetched = (await client.callTool({ name: 'fetch', arguments: { id: 'Projects/Panel plan.md' } })) as {
    structuredContent?: Record<string, string>;
  };
  t.equal(fetched.structuredContent?.url, hit?.url, 'fetch gives the same url');
  t.match(fetched.structuredContent?.obsidian_url, /^obsidian:\/\//);
  // The link opens for the vault's owner once signed in.
  const viewer = new PanelClient(server.url);
  await viewer.signIn('operator', 'operator-password-1');
  const view = await viewer.request('GET', new URL(hit!.url).pathname);
  t.equal(view.status, 200);
  t.match(await view.text(), /The zebra panel ships soon\./, 'the note view renders the note');
  // What Obsidian shows: wikilinks and embeds resolve to note views, tasks are checkboxes; nothing runs.
  const hostile = await (await viewer.request('GET', '/admin/notes/Hostile.md')).text();
  const body = /<article class="note-body card">([\s\S]*)<\/article>/.exec(hostile)?.[1] ?? '';
  const plan = '/admin/notes/Projects/Panel%20plan.md';
  t.match(body, `<a class="wikilink" href="${plan}">Panel plan</a>`, '[[Note]] links to the note it resolves to');
  t.match(body, `<a class="wikilink" href="${plan}">the plan</a>`, '[[Note|alias]] shows the alias');
  t.match(body, `<a class="wikilink" href="${plan}#next-steps">Panel plan &gt; Next steps</a>`, '[[Note#Heading]]');
  t.match(body, /<span class="wikilink dangling"[^>]*>Nowhere<\/span>/, 'a dangling link is no link');
  t.match(body, `<a class="wikilink embed" href="${plan}">Embedded: Panel plan</a>`, 'an embed is a link');
  t.match(body, /<input type="checkbox" disabled aria-label="to do"> write the docs/, '- [ ] is an unticked box');
  t.match(body, /<input type="checkbox" disabled checked aria-label="done"> sign-in/, '- [x] a ticked one');
  t.match(body, /<code>\[\[Not a link\]\]<\/code>/, 'code stays code');
  t.notMatch(body, /<script|<img|<b[ >]/i, 'no markup from the note survives');
  t.match(body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/, 'raw HTML shows as text');
  t.notMatch(body, /href="javascript:/i, 'no javascript: link');
  t.match(body, /<a href="">click<\/a>/, 'a javascript: link loses its address');
  t.notMatch(body, /href="(?!\/admin\/notes\/|")/, 'every other link points at a note view');
  const planView = await (await viewer.request('GET', plan)).text();
  t.match(planView, /<h2 id="next-steps">Next steps<\/h2>/, 'headings carry the ids heading links use');

  // Users and vaults without the CLI: add a vault and a user, set a password, limits, a sign-in code, admin.
  const post = async (p: string, form: Record<string, string>) => {
    const res = await viewer.request('POST', p, { _csrf: await viewer.csrf('/admin/users'), ...form });
    t.equal(res.status, 303, `${p} done`);
    return decodeURIComponent(decodeURIComponent(viewer.jar.get('exo_panel_flash') ?? ''));
  };
  t.match(
    await post('/admin/users/add-vault', { vault: 'carols', root: carolVault }),
    /Added the vault carols \(serving\)/,
  );
  t.match(await post('/admin/users/add', { user: 'carol', vault: 'carols' }), /Added carol, bound to carols/);
  t.match(
    await post('/admin/users/passwd', { user: 'carol', password: 'carol-password-1' }),
    /Set the password of carol/,
  );
  t.equal((await new PanelClient(server.url).signIn('carol', 'carol-password-1')).status, 303, 'carol signs in');
  t.match(
    await post('/admin/users/limits', { user: 'carol', callsPerMinute: '7', 'concurrency.write': '1' }),
    /Limits of carol: (?=.*callsPerMinute 7)(?=.*concurrency\.write 1)/,
  );
  const coded = await viewer.request('POST', '/admin/users/login-link', {
    _csrf: await viewer.csrf('/admin/users'),
    user: 'carol',
  });
  const code = /<code id="sign-in-code">([^<]+)<\/code>/.exec(await coded.text())?.[1] ?? '';
  t.ok(code.length > 10, 'a one-time code is shown');
  const byCode = new PanelClient(server.url);
  t.equal(
    (await byCode.request('POST', '/admin/sign-in', { _csrf: await byCode.csrf(), user: '', code, next: '/admin/' }))
      .status,
    303,
    'and signs carol in once',
  );
  t.match(await post('/admin/users/admin', { user: 'carol', admin: 'true' }), /carol is an administrator/);
  const usersPage = await (await viewer.request('GET', '/admin/users')).text();
  t.match(
    usersPage,
    /<th scope="row">carol<\/th><td>carols<\/td><td>admin<\/td>/,
    'the users page lists her as an admin of carols',
  );
  t.equal(
    (
      await viewer.request('POST', '/admin/users/add', {
        _csrf: await viewer.csrf('/admin/users'),
        user: 'dave',
        vault: 'carols',
      })
    ).status,
    400,
    "a second user of an unshared vault is refused with the CLI's sentence",
  );

  // Usage rollups: written with the audit rows, exact, and what the migration's backfill computes too.
  await server.host.audit.flush();
  const db = server.host.database.db;
  const totals = async () =>
    (
      await sql<{ logs: string; hourly: string; daily: string; hist: string }>`SELECT
        (SELECT count(*) FROM usage_logs) AS logs, (SELECT sum(calls) FROM usage_hourly) AS hourly,
        (SELECT sum(calls) FROM usage_daily) AS daily,
        (SELECT sum(v) FROM usage_hourly, unnest(hist) AS v) AS hist`.execute(db)
    ).rows[0];
  const live = await totals();
  t.ok(Number(live.logs) >= 3, 'the tool calls were logged');
  t.same(
    [live.hourly, live.daily, live.hist],
    [live.logs, live.logs, live.logs],
    'every call is in the hourly and daily rollups and a latency bucket',
  );
  // A batch larger than one statement's parameters allow is written in chunks, rollups and all.
  const big = new AuditWriter(
    db,
    { enabled: true, paramsMaxChars: 200, batchSize: 2500, flushIntervalMs: 60_000, maxQueue: 10_000 },
    server.host.log,
  );
  for (let i = 0; i < 2500; i++)
    big.record({
      at: new Date(Date.now() - i * 60_000),
      vaultId: server.host.vaultHandle.id,
      credentialId: `bulk-${i % 3}`,
      credentialName: 'bulk',
      tool: 'list_notes',
      family: 'notes',
      params: '{}',
      durationMs: i % 97,
      responseBytes: 10,
      outcome: 'ok',
      refusalCode: null,
    });
  await big.close();
  t.same([big.written, big.failures], [2500, 0], 'a 2,500-row batch is written');
  const after = await totals();
  t.same([after.hourly, after.daily], [after.logs, after.logs], 'and rolled up');
  const snapshot = async () =>
    (
      await sql`SELECT period, vault_id, credential_id, tool, outcome, refusal_code, calls, errors, round(duration_ms_sum::numeric, 3)::text AS d, hist FROM usage_hourly ORDER BY period, credential_id, tool, outcome`.execute(
        db,
      )
    ).rows;
  const before = await snapshot();
  await sql`DROP TABLE usage_hourly; DROP TABLE usage_daily`.execute(db);
  await rollupMigration.up(db);
  t.same(await snapshot(), before, 'the migration backfills the same rollups from usage_logs');
  const usage = await viewer.request('GET', '/admin/usage?window=7d');
  t.equal(usage.status, 200);
  t.match(await usage.text(), /search/, 'the Usage page reads them');
});
