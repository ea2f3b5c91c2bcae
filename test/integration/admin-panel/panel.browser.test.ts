// The /admin panel in headless Chromium (the shared guarded launcher: nothing leaves loopback): sign in,
// visit every page, mint a key and use it over MCP, revoke it inline (htmx) and see it refused, restore a
// revision an agent overwrote from the agent-edits page, undo an agent's change (preview, confirm), start a re-index and watch its progress, and
// take a screenshot of each page into .tap/screenshots/admin-panel/ for review.
import t from 'tap';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromiumMissing, launchGuardedBrowser, type GuardedBrowser } from '../../fixtures/browser.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { usersPasswdOp } from '../../../src/host/admin/oauth-operations.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const shots = path.resolve(here, '../../../.tap/screenshots/admin-panel');
const PLAN =
  '# Plan\n\nShip the panel on Friday.\n\n- [ ] write the docs\n- [x] sign-in\n\nSee [the guide](https://example.invalid/guide) and <script>alert(1)</script>.\n';

t.test('the operator panel in headless Chromium', { skip: chromiumMissing }, async (t) => {
  // notes, search, history and change-feed serve (the pages use them); the rest stay off to start fast.
  const families = Object.fromEntries(
    ['files', 'graph', 'tasks', 'transfer', 'bases'].map((f) => [f, { enabled: false }]),
  );
  const server = await startTestServer({
    files: { 'Plan.md': PLAN, 'Ideas/Inbox.md': '# Inbox\n\nnothing yet\n' },
    config: { families },
  });
  let browser: GuardedBrowser | undefined;
  t.teardown(async () => {
    await browser?.close();
    await server.close();
  });
  mkdirSync(shots, { recursive: true });
  await usersPasswdOp(server.host.operations, { name: 'operator', password: 'operator-password-1' });
  const origin = new URL(server.url).origin;
  const agent = await server.connect({ name: 'agent-under-test' });
  await server.host.index?.whenIdle();
  // An agent overwrites a line of Plan.md and searches for something that is not there.
  const edited = (await agent.callTool({
    name: 'replace_in_note',
    arguments: { path: 'Plan.md', pattern: 'on Friday', replacement: 'never' },
  })) as { isError?: boolean };
  t.notOk(edited.isError, 'the agent edited Plan.md');
  await agent.callTool({ name: 'keyword_search', arguments: { query: 'zeppelin' } });
  await agent.callTool({ name: 'list_notes', arguments: {} });
  await server.host.audit.flush();

  browser = await launchGuardedBrowser(() => [origin]);
  const page = await browser.context.newPage();
  page.on('dialog', (d) => void d.accept());
  const shot = (name: string) => page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
  // A nav link is a full page load, and htmx binds its triggers once the page has loaded: a click before that
  // (a loaded machine, three test files at once) toggled "Diff of this change" with no request behind it.
  const nav = async (name: string) => {
    await page.click(`nav >> text=${name}`);
    await page.waitForLoadState('load');
  };

  await page.goto(`${origin}/admin/`);
  t.match(page.url(), /\/admin\/sign-in\?next=/, 'an anonymous visit lands on sign-in');
  await shot('sign-in');
  await page.fill('#user', 'operator');
  await page.fill('#password', 'operator-password-1');
  await page.click('button[type=submit]');
  await page.waitForURL(`${origin}/admin/`);
  t.equal(await page.textContent('h1'), 'Overview');
  t.match(await page.textContent('main'), /Families/);
  await shot('overview');
  await page.setViewportSize({ width: 390, height: 844 });
  await shot('overview-phone');
  t.ok(
    await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1),
    'the overview fits a phone screen without sideways scrolling',
  );
  await page.setViewportSize({ width: 1280, height: 720 });

  // Mint a key, use it, revoke it inline, see it refused.
  await nav('Credentials');
  await page.fill('#key-name', 'browser-minted');
  await page.check('input[name=scope][value=readwrite]');
  await page.click('form[action="/admin/credentials/keys"] button[type=submit]');
  const raw = (await page.textContent('#minted-key'))?.trim() ?? '';
  t.match(raw, /^exo_/, 'the new key is shown once');
  await shot('credentials-minted');
  const connectWith = async (key: string) => {
    const c = new Client({ name: 'minted', version: '1.0.0' });
    await c.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      }),
    );
    return c;
  };
  const minted = await connectWith(raw);
  const listed = (await minted.callTool({ name: 'list_notes', arguments: {} })) as { isError?: boolean };
  t.notOk(listed.isError, 'the minted key works over MCP');
  await minted.close();
  await page.goto(`${origin}/admin/credentials`);
  const row = page.locator('#key-table tr', { hasText: 'browser-minted' });
  await row.locator('button', { hasText: 'Revoke' }).click();
  await page.waitForSelector('#key-table td[role=status]');
  t.match(await page.textContent('#key-table td[role=status]'), /Key revoked/, 'htmx swapped the row in place');
  await shot('credentials-revoked');
  await t.rejects(connectWith(raw), 'the revoked key is refused');

  // Usage: the agent's calls are charted.
  await nav('Usage');
  t.ok(await page.$('svg.chart'), 'a usage chart is drawn');
  t.match(await page.textContent('main'), /replace_in_note/);
  await shot('usage');

  // Agent edits: the agent's change, its diff, a restore with preview.
  await nav('Agent edits');
  t.match(await page.textContent('main'), /Plan\.md/, 'the agent change is listed');
  await page.click('summary:has-text("Diff of this change")');
  await page.waitForSelector('.diff-slot pre.diff');
  t.match(
    await page.textContent('.diff-slot pre.diff'),
    /-Ship the panel on Friday\.[\s\S]*\+Ship the panel never\./,
    "the change's own diff loads in place",
  );
  await shot('edits');
  await page.click('text=Diff and restore');
  await page.waitForSelector('h1:has-text("Revisions of Plan.md")');
  await shot('edits-revisions');
  await page
    .locator('button', { hasText: /^Preview restoring/ })
    .first()
    .click();
  await page.waitForSelector('#confirm-restore');
  t.match(await page.textContent('pre.diff'), /on Friday/, 'the preview shows the diff');
  await shot('edits-restore-preview');
  // The undo below starts before this restore: a person's restore from the panel is not an agent's change.
  const beforeRestore = new Date().toISOString();
  await page.click('#confirm-restore');
  await page.waitForSelector('.flash');
  t.match(await page.textContent('.flash'), /Restored Plan\.md/);
  t.equal(
    readFileSync(path.join(server.vaultDir, 'Plan.md'), 'utf8'),
    PLAN,
    'the note has its content from before the agent edit',
  );

  // Undo: the agent scribbles over Inbox.md; the panel previews undoing every agent's changes since the restore,
  // then undoes.
  const scribbled = (await agent.callTool({
    name: 'replace_in_note',
    arguments: { path: 'Ideas/Inbox.md', pattern: 'nothing yet', replacement: 'agent scribble' },
  })) as { isError?: boolean };
  t.notOk(scribbled.isError, 'the agent edited Ideas/Inbox.md');
  await page.goto(`${origin}/admin/edits`);
  await page.fill('#undo-since', beforeRestore);
  await page.click('form[action="/admin/edits/undo"] button[type=submit]');
  await page.waitForSelector('h1:has-text("Undo agent changes?")');
  t.match(
    await page.textContent('main'),
    /Ideas\/Inbox\.md[\s\S]*agent scribble/,
    'the undo preview names the note and shows its diff',
  );
  t.equal(
    readFileSync(path.join(server.vaultDir, 'Ideas/Inbox.md'), 'utf8'),
    '# Inbox\n\nagent scribble\n',
    'a preview changes nothing',
  );
  t.notMatch(
    await page.textContent('main'),
    /Plan\.md/,
    "only the agent's change since then, not the panel's restore (a person's, actor kind panel)",
  );
  await shot('edits-undo-preview');
  await page.click('button:has-text("Undo these")');
  await page.waitForSelector('.flash');
  t.equal(
    readFileSync(path.join(server.vaultDir, 'Ideas/Inbox.md'), 'utf8'),
    '# Inbox\n\nnothing yet\n',
    'after confirming, the note is back on disk as it was before the agent',
  );
  t.equal(readFileSync(path.join(server.vaultDir, 'Plan.md'), 'utf8'), PLAN, 'and the restore before it stays');

  // Index and search: a re-index whose progress updates in place.
  await nav('Index and search');
  t.match(await page.textContent('main'), /zeppelin/, 'the search that found nothing is listed');
  await shot('index');
  // Enough notes that a rebuild outlasts the redirect to its job page (two notes finish before it loads).
  for (let i = 0; i < 600; i++)
    writeFileSync(
      path.join(server.vaultDir, 'Ideas', `Idea ${i}.md`),
      `# Idea ${i}\n\nSome text about idea ${i} and [[Plan]].\n`,
    );
  await server.host.index!.runPass({ force: false });
  await server.host.index!.whenIdle();
  await page.check('input[name=rebuild]');
  await page.click('#start-reindex');
  await page.waitForSelector('.job');
  const jobUrl = page.url();
  t.equal(await page.textContent('.job-state'), 'running', 'the job page opens while the re-index runs');
  t.ok(await page.$('.job progress'), 'with a progress bar');
  await shot('index-job-running');
  await page.waitForFunction(() => document.querySelector('.job-state')?.textContent === 'done', undefined, {
    timeout: 20_000,
  });
  t.equal(page.url(), jobUrl, 'the job finished on the same page (polled, not reloaded)');
  t.match(await page.textContent('.job-message'), /scanned \d+ notes/, 'the summary shows');
  await shot('index-job');

  // Users and vaults: what the CLI's users and vaults commands do.
  await nav('Users and vaults');
  t.match(
    await page.textContent('main'),
    /Add a user[\s\S]*Add a vault/,
    'the users page offers adding users and vaults',
  );
  await shot('users');

  // Danger zone and a confirmation page (not confirmed).
  await nav('Danger zone');
  await shot('danger');
  await page.click('text=Revoke everything of operator…');
  t.match(await page.textContent('main'), /Revoke .*API key/, 'the confirmation names what it will do');
  await shot('danger-confirm');

  // The note view renders markdown and neutralises the note's HTML.
  await page.goto(`${origin}/admin/notes/Plan.md`);
  t.equal(await page.textContent('article h1'), 'Plan');
  t.equal(await page.$$eval('article script', (s) => s.length), 0, "the note's script tag is not markup");
  await shot('note');

  t.same(browser.blocked, [], 'the browser asked for nothing outside the loopback origin');
});
