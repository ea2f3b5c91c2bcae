// Upload and download links end to end: mint over MCP, redeem over real HTTP on /transfer/*, check the
// state machine, and every bad input the issue names (reuse, expiry, query tokens, oversize, symlinks…).
import t from 'tap';
import http from 'node:http';
import { existsSync, readFileSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { refusalOf, textOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { createApiKey, revokeApiKey } from '../../../src/host/auth/api-keys.js';
import { controls } from '../../fixtures/transfer/controls.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const family = path.resolve(here, '../../fixtures/transfer/family-under-test.ts');
const CAP = 64 * 1024;
const PUBLIC = 'https://vault.example.org';

const server = await startTestServer({
  builtinDir: null,
  config: {
    plugins: [family],
    transfer: {
      publicUrl: PUBLIC,
      maxUploadBytes: CAP,
      byteRequestsPerMinute: 10_000,
      pageRequestsPerMinute: 10_000,
      maxConcurrentUploads: 1,
    },
  },
  files: {
    'docs/report.pdf': '%PDF-1.4 report',
    'docs/keep.bin': 'original bytes',
    'outside-target.txt': 'do not touch',
  },
});
t.teardown(() => server.close());
const client = await server.connect();
const db = server.host.database.db;
const v = (p: string) => path.join(server.vaultDir, p);
type Result = { isError?: boolean; content?: unknown; structuredContent?: unknown };
const call = async (name: string, args: Record<string, unknown>, c = client) =>
  (await c.callTool({ name, arguments: args })) as Result;
const out = (r: { structuredContent?: unknown }) => r.structuredContent as Record<string, any>;

interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function req(
  method: string,
  p: string,
  o: { headers?: Record<string, string | number>; body?: Buffer | string; chunks?: Buffer[] } = {},
): Promise<Res> {
  const u = new URL(server.url + p);
  return new Promise((resolve, reject) => {
    const r = http.request(
      { method, host: u.hostname, port: u.port, path: u.pathname + u.search, headers: o.headers },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    if (o.chunks) {
      for (const c of o.chunks) r.write(c);
      r.end();
    } else r.end(o.body);
  });
}

const tokenOf = (url: string) => url.slice(url.indexOf('#') + 1);
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
async function mintUpload(args: Record<string, unknown>, c = client) {
  const r = await call('request_upload', args, c);
  t.notOk(r.isError, textOf(r));
  const o = out(r);
  return { ...o, token: tokenOf(o.url as string) } as Record<string, any> & { token: string; upload_id: string };
}
const status = async (id: string, c = client) => out(await call('check_upload', { upload_id: id }, c));
let notValidBody = '';

t.test('request_upload mints a fragment link, stored hashed, and check_upload says pending', async (t) => {
  const m = await mintUpload({ path: 'inbox/scan.pdf' });
  t.match(m.url, /^https:\/\/vault\.example\.org\/transfer\/upload#[A-Za-z0-9_-]{43}$/);
  t.match(m.upload_id, /^[A-Za-z0-9_-]{22}$/);
  t.equal(m.max_bytes, CAP);
  t.equal(m.expires_in, 900);
  t.match(
    m.curl,
    /curl -H "Authorization: Bearer [A-Za-z0-9_-]{43}" -T <file> https:\/\/vault\.example\.org\/transfer\/upload/,
  );
  const rows = await db.selectFrom('transfer_links').selectAll().execute();
  t.notOk(JSON.stringify(rows).includes(m.token), 'the raw token is not stored');
  const s = await status(m.upload_id);
  t.equal(s.status, 'pending');
  t.equal(s.path, 'inbox/scan.pdf');
  t.equal((await status('x'.repeat(22))).status, 'not_found');
  t.equal((await status('../etc')).upload_id, '(not shown)', 'a malformed id is not echoed');
});

t.test('the upload page is served and its script sends the fragment token as a Bearer header', async (t) => {
  const page = await req('GET', '/transfer/upload');
  t.equal(page.status, 200);
  t.match(page.headers['content-type'], /text\/html/);
  t.match(page.headers['content-security-policy'], /script-src 'self'/);
  t.equal(page.headers['cache-control'], 'no-store');
  t.match(page.body.toString(), /<input type="file"/);
  t.match(page.body.toString(), /<progress/);
  t.notMatch(page.body.toString(), /<script>[^<]/, 'no inline script');
  const js = (await req('GET', '/transfer/assets/upload.js')).body.toString();
  t.match(js, /location\.hash/);
  t.match(js, /setRequestHeader\('Authorization', 'Bearer ' \+ token\)/);
  t.match(js, /xhr\.open\('PUT', '\/transfer\/upload'\)/);
  t.match(js, /upload\.onprogress/);
  t.equal((await req('HEAD', '/transfer/download')).status, 200);
  t.equal((await req('POST', '/transfer/upload')).status, 405);
  t.equal((await req('DELETE', '/transfer/download/file')).status, 405);
});

t.test('an upload publishes once; reuse, query-string tokens and unknown tokens get one identical 404', async (t) => {
  const m = await mintUpload({ path: 'inbox/photo.bin' });
  const info = await req('GET', '/transfer/upload/info', { headers: bearer(m.token) });
  t.equal(JSON.parse(info.body.toString()).path, 'inbox/photo.bin');
  const q = await req('PUT', `/transfer/upload?token=${m.token}&access_token=${m.token}`, { body: 'via query' });
  t.equal(q.status, 404, 'a token in the query string is ignored');
  notValidBody = q.body.toString();
  t.notOk(existsSync(v('inbox/photo.bin')));
  const body = Buffer.from('the real bytes \u0000\u0001');
  const ok = await req('PUT', '/transfer/upload', {
    headers: { ...bearer(m.token), 'content-type': 'application/octet-stream' },
    body,
  });
  t.equal(ok.status, 201, ok.body.toString());
  t.equal(readFileSync(v('inbox/photo.bin')).compare(body), 0);
  const s = await status(m.upload_id);
  t.equal(s.status, 'completed');
  t.equal(s.size, body.length);
  t.match(s.sha256, /^[0-9a-f]{64}$/);
  t.match(
    textOf(await call('check_upload', { upload_id: m.upload_id })),
    /^completed: .*\npath: inbox\/photo\.bin\nsize: \d+ bytes\nsha256: /,
  );
  const again = await req('PUT', '/transfer/upload', { headers: bearer(m.token), body: 'second' });
  t.equal(again.status, 404, again.body.toString());
  t.equal(again.body.toString(), notValidBody, 'consumed looks exactly like unknown');
  const unknown = await req('PUT', '/transfer/upload', { headers: bearer('A'.repeat(43)), body: 'x' });
  t.equal(unknown.body.toString(), notValidBody);
  const none = await req('PUT', '/transfer/upload', { body: 'x' });
  t.equal(none.status, 404);
  t.equal(readFileSync(v('inbox/photo.bin')).compare(body), 0, 'the second redemption changed nothing');
});

t.test('curl-style upload without a content type works', async (t) => {
  const m = await mintUpload({ path: 'inbox/curl.txt' });
  const r = await req('PUT', '/transfer/upload', {
    headers: { ...bearer(m.token), 'content-length': 5 },
    body: 'hello',
  });
  t.equal(r.status, 201);
  t.equal(readFileSync(v('inbox/curl.txt'), 'utf8'), 'hello');
});

t.test('oversized uploads are cut off while streaming and nothing is published', async (t) => {
  const m = await mintUpload({ path: 'inbox/huge.bin' });
  const declared = await req('PUT', '/transfer/upload', {
    headers: { ...bearer(m.token), 'content-length': CAP + 1 },
    body: Buffer.alloc(CAP + 1),
  });
  t.equal(declared.status, 413);
  t.notOk(existsSync(v('inbox/huge.bin')));
  t.equal((await status(m.upload_id)).status, 'pending', 'a pre-publish failure releases the claim');
  const chunks = Array.from({ length: 40 }, () => Buffer.alloc(4096, 1));
  let streamed: Res | Error;
  try {
    streamed = await req('PUT', '/transfer/upload', {
      headers: { ...bearer(m.token), 'transfer-encoding': 'chunked' },
      chunks,
    });
  } catch (e) {
    streamed = e as Error;
  }
  if (streamed instanceof Error) t.pass(`the stream was cut off (${streamed.message})`);
  else t.equal(streamed.status, 413);
  t.notOk(existsSync(v('inbox/huge.bin')), 'nothing published');
  t.equal((await status(m.upload_id)).status, 'pending');
});

t.test('expired links: 404 on redemption, expired in check_upload', async (t) => {
  const m = await mintUpload({ path: 'inbox/late.bin', expires_in: 5 });
  t.equal(m.expires_in, 60, 'a TTL under the floor is clamped');
  t.match(m.note, /clamped to 60 s/);
  controls.clockOffsetMs = 61_000;
  try {
    const r = await req('PUT', '/transfer/upload', { headers: bearer(m.token), body: 'late' });
    t.equal(r.status, 404);
    t.equal(r.body.toString(), notValidBody);
    t.equal((await status(m.upload_id)).status, 'expired');
  } finally {
    controls.clockOffsetMs = 0;
  }
  t.notOk(existsSync(v('inbox/late.bin')));
});

t.test('an upload to a path that became a symlink publishes nothing', async (t) => {
  const m = await mintUpload({ path: 'inbox/target.bin' });
  symlinkSync('../outside-target.txt', v('inbox/target.bin'));
  const r = await req('PUT', '/transfer/upload', { headers: bearer(m.token), body: 'evil' });
  t.equal(r.status, 409);
  t.match(JSON.parse(r.body.toString()).error, /symbolic link/);
  t.equal(readFileSync(v('outside-target.txt'), 'utf8'), 'do not touch');
  rmSync(v('inbox/target.bin'));
  const m2 = await mintUpload({ path: 'linked/deep.bin' });
  mkdirSync(v('real-dir'));
  symlinkSync('real-dir', v('linked'));
  const r2 = await req('PUT', '/transfer/upload', { headers: bearer(m2.token), body: 'evil' });
  t.equal(r2.status, 409, 'a parent that became a symlink is refused too');
  t.notOk(existsSync(v('real-dir/deep.bin')));
});

t.test('overwrite links pin the incumbent and refuse to publish over a changed file', async (t) => {
  t.equal(refusalOf(await call('request_upload', { path: 'docs/keep.bin' }))!.code, 'already_exists');
  const m = await mintUpload({ path: 'docs/keep.bin', overwrite: true });
  t.equal(m.overwrite, true);
  writeFileSync(v('docs/keep.bin'), 'edited meanwhile');
  const r = await req('PUT', '/transfer/upload', { headers: bearer(m.token), body: 'upload' });
  t.equal(r.status, 409);
  t.equal(readFileSync(v('docs/keep.bin'), 'utf8'), 'edited meanwhile');
  const m2 = await mintUpload({ path: 'docs/keep.bin', overwrite: true });
  const r2 = await req('PUT', '/transfer/upload', { headers: bearer(m2.token), body: 'replacement' });
  t.equal(r2.status, 201);
  t.equal(readFileSync(v('docs/keep.bin'), 'utf8'), 'replacement');
});

t.test('links are scoped to their credential and die with it; credential expiry bounds the TTL', async (t) => {
  const other = await createApiKey(db, { name: 'other', scope: 'readwrite', vaultId: server.host.vaultHandle.id });
  const otherClient = await server.connect({ key: other.raw });
  const m = await mintUpload({ path: 'inbox/other.bin' }, otherClient);
  t.equal((await status(m.upload_id)).status, 'not_found', 'another principal cannot see it');
  t.equal((await status(m.upload_id, otherClient)).status, 'pending');
  await revokeApiKey(db, 'other');
  const r = await req('PUT', '/transfer/upload', { headers: bearer(m.token), body: 'x' });
  t.equal(r.status, 404);
  t.equal(r.body.toString(), notValidBody);
  const soon = await createApiKey(db, {
    name: 'soon',
    scope: 'readwrite',
    vaultId: server.host.vaultHandle.id,
    expiresAt: new Date(Date.now() + 120_000),
  });
  const soonClient = await server.connect({ key: soon.raw });
  const short = await mintUpload({ path: 'inbox/short.bin', expires_in: 3600 }, soonClient);
  t.ok(short.expires_in <= 120 && short.expires_in > 100);
  t.match(short.note, /credential expires/);
  const dying = await createApiKey(db, {
    name: 'dying',
    scope: 'readwrite',
    vaultId: server.host.vaultHandle.id,
    expiresAt: new Date(Date.now() + 10_000),
  });
  const dyingClient = await server.connect({ key: dying.raw });
  t.equal(refusalOf(await call('request_upload', { path: 'inbox/d.bin' }, dyingClient))!.code, 'credential_expiring');
});

t.test('uploads are bounded in concurrency', async (t) => {
  const a = await mintUpload({ path: 'inbox/slow.bin' });
  const b = await mintUpload({ path: 'inbox/fast.bin' });
  const u = new URL(server.url);
  const slow = http.request({
    method: 'PUT',
    host: u.hostname,
    port: u.port,
    path: '/transfer/upload',
    headers: { ...bearer(a.token), 'content-length': 10 },
  });
  const slowDone = new Promise<number>((resolve) =>
    slow.on('response', (res) => (res.resume(), resolve(res.statusCode ?? 0))),
  );
  slow.write('12345');
  for (let i = 0; i < 50 && (await status(a.upload_id)).status !== 'uploading'; i++)
    await new Promise((r) => setTimeout(r, 20));
  t.equal((await status(a.upload_id)).status, 'uploading');
  const busy = await req('PUT', '/transfer/upload', { headers: bearer(b.token), body: 'x' });
  t.equal(busy.status, 503);
  t.equal((await status(b.upload_id)).status, 'pending', 'a busy refusal does not touch the link');
  slow.end('67890');
  t.equal(await slowDone, 201);
  t.equal((await req('PUT', '/transfer/upload', { headers: bearer(b.token), body: 'x' })).status, 201);
});

t.test('download links: multi-use, bound to the bytes at mint, Bearer only', async (t) => {
  const r = await call('request_download', { path: 'docs/report.pdf' });
  t.notOk(r.isError, textOf(r));
  const d = out(r);
  t.match(d.url, /^https:\/\/vault\.example\.org\/transfer\/download#/);
  const token = tokenOf(d.url);
  for (let i = 0; i < 2; i++) {
    const got = await req('GET', '/transfer/download/file', { headers: bearer(token) });
    t.equal(got.status, 200);
    t.equal(got.body.toString(), '%PDF-1.4 report');
    t.equal(got.headers['content-type'], 'application/pdf');
    t.match(got.headers['content-disposition'], /attachment; filename="report\.pdf"/);
  }
  const head = await req('HEAD', '/transfer/download/file', { headers: bearer(token) });
  t.equal(head.status, 200);
  t.equal(head.body.length, 0);
  const info = JSON.parse((await req('GET', '/transfer/download/info', { headers: bearer(token) })).body.toString());
  t.equal(info.name, 'report.pdf');
  t.equal((await req('GET', `/transfer/download/file?token=${token}`)).status, 404);
  writeFileSync(v('docs/report.pdf'), 'changed');
  const after = await req('GET', '/transfer/download/file', { headers: bearer(token) });
  t.equal(after.status, 404);
  t.equal(after.body.toString(), notValidBody);
  t.equal(refusalOf(await call('request_download', { path: 'docs' }))!.code, 'is_directory');
  t.equal(refusalOf(await call('request_download', { path: 'docs/none.pdf' }))!.code, 'not_found');
});

t.test('a read-only credential may mint a download link (it changes nothing) but not an upload link', async (t) => {
  const reader = await server.connect({ key: server.readKey, name: 'reader' });
  t.teardown(() => reader.close());
  const names = (await reader.listTools()).tools.map((x) => x.name);
  t.ok(names.includes('request_download'), 'listed for read-only keys');
  t.notOk(names.includes('request_upload'), 'uploads stay write-only');
  writeFileSync(v('docs/for-reader.txt'), 'shared with a reader');
  const r = await call('request_download', { path: 'docs/for-reader.txt' }, reader);
  t.notOk(r.isError, textOf(r));
  const got = await req('GET', '/transfer/download/file', { headers: bearer(tokenOf(out(r).url as string)) });
  t.equal(got.status, 200);
  t.equal(got.body.toString(), 'shared with a reader');
});

t.test('tokens never reach the usage log', async (t) => {
  await new Promise((r) => setTimeout(r, 700));
  const rows = await db.selectFrom('usage_logs').select(['tool', 'params']).execute();
  t.ok(rows.some((x: { tool: string }) => x.tool === 'request_upload'));
  const links = await db.selectFrom('transfer_links').select(['token_hash']).execute();
  t.ok(links.length > 5);
  t.notOk(
    rows.some((x: { params: string | null }) => /[A-Za-z0-9_-]{43}/.test(x.params ?? '')),
    'no token-shaped value in params',
  );
});

t.test('minting refuses without a public origin rather than emit a localhost link', async (t) => {
  await server.rewriteConfig({ transfer: { maxUploadBytes: CAP } });
  const r = refusalOf(await call('request_upload', { path: 'inbox/x.bin' }))!;
  t.equal(r.code, 'no_public_origin');
  t.equal(r.setting, 'server.publicUrl');
  t.equal(refusalOf(await call('request_download', { path: 'docs/keep.bin' }))!.code, 'no_public_origin');
});

t.test('pages and byte routes are rate limited per client (defaults 30 and 10 per minute)', async (t) => {
  const pages = [];
  for (let i = 0; i < 31; i++) pages.push((await req('GET', '/transfer/upload')).status);
  t.same(pages.slice(0, 30).filter((x) => x === 200).length, 30);
  t.equal(pages[30], 429);
  const bytes = [];
  for (let i = 0; i < 11; i++)
    bytes.push((await req('GET', '/transfer/download/file', { headers: bearer('B'.repeat(43)) })).status);
  t.same(bytes.slice(0, 10), Array(10).fill(404));
  t.equal(bytes[10], 429);
});

t.test('without transfer.publicUrl the host server.publicUrl is the link origin', async (t) => {
  const other = await startTestServer({
    builtinDir: null,
    config: { plugins: [family], server: { publicUrl: 'https://notes.example.net' } },
    files: { 'a.bin': 'x' },
  });
  t.teardown(() => other.close());
  const c = await other.connect();
  const r = (await c.callTool({ name: 'request_upload', arguments: { path: 'inbox/y.bin' } })) as Result;
  t.notOk(r.isError, textOf(r));
  t.match(JSON.stringify(r.structuredContent), /https:\/\/notes\.example\.net\/transfer\/upload#/);
});
