// The upload page in a real browser: headless Debian Chromium (playwright-core) opens a minted link, picks a
// file, uploads it, and a reused link shows the page's failure state. Skips when /usr/bin/chromium is absent.
// Chromium must never reach the network: a dead loopback proxy, a NOTFOUND resolver and a route guard.
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { textOf } from '../../../src/host/testing/testkit.js';
import { chromiumMissing, launchGuardedBrowser, type GuardedBrowser } from '../../fixtures/browser.js';
import { startTestServer } from '../../../src/host/testing/harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const family = path.resolve(here, '../../fixtures/transfer/family-under-test.ts');

type Result = { isError?: boolean; content?: unknown; structuredContent?: unknown };

const skip = chromiumMissing;

t.test('the upload page works in headless Chromium', { skip }, async (t) => {
  const transfer = { maxUploadBytes: 1024 * 1024, byteRequestsPerMinute: 10_000, pageRequestsPerMinute: 10_000 };
  const server = await startTestServer({ builtinDir: null, config: { plugins: [family], transfer } });
  const work = mkdtempSync(path.join(os.tmpdir(), 'exo-browser-'));
  let browser: GuardedBrowser | undefined;
  t.teardown(async () => {
    await browser?.close();
    await server.close();
    rmSync(work, { recursive: true, force: true });
  });
  // The port is only known once the server listens: point the family's public origin at it.
  const origin = new URL(server.url).origin;
  await server.rewriteConfig({ transfer: { ...transfer, publicUrl: origin } });
  const client = await server.connect();
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as Result;
  const out = (r: Result) => r.structuredContent as Record<string, any>;

  browser = await launchGuardedBrowser(() => [origin]);
  const { context, requested, blocked } = browser;

  const minted = await call('request_upload', { path: 'inbox/from-browser.bin' });
  t.notOk(minted.isError, minted.isError ? textOf(minted) : 'request_upload minted a link');
  const link = out(minted).url as string;
  t.equal(link.slice(0, link.indexOf('#')), `${origin}/transfer/upload`, 'the link points at the loopback server');
  const bytes = Buffer.concat([
    Buffer.from('%PDF-1.4 browser upload\n'),
    Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 31) % 256)),
  ]);
  const local = path.join(work, 'from-browser.bin');
  writeFileSync(local, bytes);

  // A second tab holds the same link open from before the upload, as a user with two tabs would.
  const stale = await context.newPage();
  await stale.goto(link);
  await stale.waitForFunction(() => !(document.getElementById('send') as HTMLButtonElement).disabled);

  const page = await context.newPage();
  await page.goto(link);
  t.equal(new URL(page.url()).hash, '', 'the page removes the token from the address bar');
  await page.waitForFunction(() => !(document.getElementById('send') as HTMLButtonElement).disabled);
  t.match(await page.textContent('#target'), /Destination: inbox\/from-browser\.bin/);
  await page.setInputFiles('#file', local);
  await page.click('#send');
  await page.waitForFunction(() =>
    /^(Done|Upload refused|The upload)/.test(document.getElementById('status')?.textContent ?? ''),
  );
  const done = (await page.textContent('#status')) ?? '';
  t.match(
    done,
    /^Done: inbox\/from-browser\.bin \(\d+ bytes, sha256 [0-9a-f]{64}\)$/,
    'the page shows its success state',
  );
  t.match(done, `(${bytes.length} bytes`);
  t.equal(await page.$eval('#bar', (el) => (el as HTMLProgressElement).value), 100);
  t.equal(
    readFileSync(path.join(server.vaultDir, 'inbox/from-browser.bin')).compare(bytes),
    0,
    'the vault holds the exact bytes',
  );
  const status = out(await call('check_upload', { upload_id: out(minted).upload_id }));
  t.equal(status.status, 'completed');
  t.equal(status.size, bytes.length);
  t.ok(done.includes(status.sha256), 'the page and check_upload agree on the sha256');

  // The same link opened again: the page says the link is not valid and offers no upload.
  const again = await context.newPage();
  await again.goto(link);
  await again.waitForFunction(() => !/Checking/.test(document.getElementById('target')?.textContent ?? ''));
  t.match(await again.textContent('#target'), /not valid any more/, 'a used link shows the failure state');
  t.ok(await again.$eval('#send', (el) => (el as HTMLButtonElement).disabled), 'the upload button stays disabled');

  // The tab opened before the upload tries to send with the used link: refused, nothing changes.
  writeFileSync(path.join(work, 'other.bin'), 'different bytes');
  await stale.setInputFiles('#file', path.join(work, 'other.bin'));
  await stale.click('#send');
  await stale.waitForFunction(() => (document.getElementById('status')?.textContent ?? '') !== '');
  t.match(
    await stale.textContent('#status'),
    /^Upload refused: This link is not valid/,
    'a second redemption shows the failure state',
  );
  t.equal(
    readFileSync(path.join(server.vaultDir, 'inbox/from-browser.bin')).compare(bytes),
    0,
    'the second attempt changed nothing',
  );
  t.equal(out(await call('check_upload', { upload_id: out(minted).upload_id })).status, 'completed');

  t.same(blocked, [], 'the browser asked for nothing outside the loopback origin');
  const token = link.slice(link.indexOf('#') + 1);
  t.notOk(
    requested.some((u) => u.includes(token)),
    'the token never appears in a requested URL',
  );
  t.ok(
    requested.length >= 6 && requested.every((u) => u.startsWith(`${origin}/transfer/`)),
    'every request went to the server under test',
  );
});
