// import_from_url end to end through the SDK client: a loopback HTTPS server with a throwaway test CA,
// crafted DNS answers, and a connector that refuses anything but loopback (test-only opt-in for 127.0.0.1).
import t from 'tap';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { refusalOf, textOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { controls } from '../../fixtures/transfer/controls.js';
import { makeTestTls, startHttpsServer } from '../../fixtures/transfer/tls-fixture.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const family = path.resolve(here, '../../fixtures/transfer/family-under-test.ts');
const CAP = 64 * 1024;
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(5000, 0x42)]);

const tlsFiles = makeTestTls();
controls.ca = tlsFiles.ca;
const redirect =
  (to: string, code = 302) =>
  (_q: unknown, res: import('node:http').ServerResponse) =>
    res.writeHead(code, { location: to }).end();
const routes: Record<string, Parameters<typeof startHttpsServer>[1][string]> = {
  '/doc.pdf': (_q, res) =>
    res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': PDF.length }).end(PDF),
  '/r1': redirect('/r2', 301),
  '/r2': redirect('https://files.example.com/doc.pdf', 307),
  '/to-private': redirect('https://internal.example.com/secret'),
  '/to-metadata': redirect('https://169.254.169.254/latest/meta-data/'),
  '/to-decimal': redirect('https://2130706433/'),
  '/to-http': redirect('http://files.example.com/doc.pdf'),
  '/to-userinfo': redirect('https://admin:pw@files.example.com/doc.pdf'),
  '/big': (_q, res) =>
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.alloc(CAP + 10, 1)),
  '/big-declared': (_q, res) => res.writeHead(200, { 'content-length': CAP + 10 }).end(Buffer.alloc(CAP + 10, 1)),
  '/short': (_q, res) => {
    res.writeHead(200, { 'content-length': 1000 });
    res.write('only ten b');
    setTimeout(() => res.destroy(), 20);
  },
  '/slow': (_q, res) => {
    res.writeHead(200, { 'content-length': 1000 });
    res.write('trickle');
  },
  '/missing': (_q, res) => res.writeHead(404).end('nope'),
};
for (let i = 0; i < 6; i++) routes[`/loop/${i}`] = redirect(`/loop/${i + 1}`);
routes['/loop/6'] = routes['/doc.pdf'];
for (let i = 0; i < 5; i++) routes[`/five/${i}`] = redirect(`/five/${i + 1}`);
routes['/five/5'] = routes['/doc.pdf'];

const origin = await startHttpsServer(tlsFiles, routes);
t.teardown(() => origin.close());
controls.dns.set('files.example.com', [{ address: '127.0.0.1', family: 4 }]);
controls.dns.set('v6.example.com', [{ address: '::1', family: 6 }]);
controls.dns.set('internal.example.com', [{ address: '10.0.0.5', family: 4 }]);
controls.dns.set('mixed.example.com', [
  { address: '127.0.0.1', family: 4 },
  { address: '192.168.1.20', family: 4 },
]);
controls.dns.set('mapped.example.com', [{ address: '::ffff:10.1.2.3', family: 6 }]);
controls.portMap.set(443, origin.port);

const server = await startTestServer({
  builtinDir: null,
  config: { plugins: [family], transfer: { import: { maxBytes: CAP, timeoutMs: 1500 } } },
  files: { 'papers/existing.pdf': 'old' },
});
t.teardown(() => server.close());
const client = await server.connect();
type Result = { isError?: boolean; content?: unknown; structuredContent?: unknown };
const imp = async (url: string, p: string, overwrite?: boolean) =>
  (await client.callTool({
    name: 'import_from_url',
    arguments: { url, path: p, ...(overwrite === undefined ? {} : { overwrite }) },
  })) as Result;
const v = (p: string) => path.join(server.vaultDir, p);
t.teardown(() => {
  t.comment(`import connections: ${controls.connects.length}, to denied addresses: ${controls.deniedAttempts}`);
});

t.test('happy path: a pinned, verified TLS fetch from the loopback test origin', async (t) => {
  const r = await imp('https://files.example.com/doc.pdf', 'papers/doc.pdf');
  t.notOk(r.isError, textOf(r));
  const o = r.structuredContent as Record<string, any>;
  t.equal(o.size, PDF.length);
  t.equal(o.mime, 'application/pdf');
  t.equal(o.source, 'https://files.example.com/doc.pdf');
  t.equal(readFileSync(v('papers/doc.pdf')).compare(PDF), 0);
  t.match(
    textOf(r),
    /^Imported 5009 bytes to papers\/doc\.pdf\nsha256: [0-9a-f]{64}\nmime: application\/pdf\nsource: https:\/\/files\.example\.com\/doc\.pdf/,
  );
  t.equal(origin.hits.at(-1), 'files.example.com /doc.pdf', 'the original Host header is sent');
  const last = controls.connects.at(-1)!;
  t.same(
    { address: last.address, servername: last.servername, tls: last.tls },
    { address: '127.0.0.1', servername: 'files.example.com', tls: true },
  );
  const six = await imp('https://v6.example.com/doc.pdf', 'papers/doc6.pdf');
  t.notOk(six.isError, textOf(six));
  t.equal(controls.connects.at(-1)!.address, '::1');
});

t.test('no clobber by default; overwrite replaces', async (t) => {
  const hits = origin.hits.length;
  const r = refusalOf(await imp('https://files.example.com/doc.pdf', 'papers/existing.pdf'))!;
  t.equal(r.code, 'already_exists');
  t.equal(origin.hits.length, hits, 'nothing was fetched');
  const o = await imp('https://files.example.com/doc.pdf', 'papers/existing.pdf', true);
  t.equal((o.structuredContent as Record<string, any>).created, false);
  t.equal(readFileSync(v('papers/existing.pdf')).compare(PDF), 0);
});

t.test('redirects are followed (≤ 5) and every hop is vetted again', async (t) => {
  const r = await imp('https://files.example.com/r1', 'papers/redirected.pdf');
  t.equal((r.structuredContent as Record<string, any>).redirects, 2);
  const five = await imp('https://files.example.com/five/0', 'papers/five.pdf');
  t.notOk(five.isError, textOf(five));
  const six = refusalOf(await imp('https://files.example.com/loop/0', 'papers/six.pdf'))!;
  t.equal(six.code, 'url_refused');
  t.match(six.rule, /more than 5 redirects/);
  t.notOk(existsSync(v('papers/six.pdf')));
  const cases: Array<[string, RegExp]> = [
    ['/to-private', /internal\.example\.com resolves to 10\.0\.0\.5.*private network/],
    ['/to-metadata', /169\.254\.169\.254.*link-local/],
    ['/to-decimal', /2130706433/],
    ['/to-http', /plain http is not allowed/],
    ['/to-userinfo', /credentials/],
  ];
  for (const [route, rule] of cases) {
    const before = controls.connects.length;
    const x = refusalOf(await imp(`https://files.example.com${route}`, 'papers/redir-bad.pdf'))!;
    t.equal(x.code, 'url_refused', route);
    t.match(x.rule, rule, route);
    t.match(x.rule, /^redirect 1 to a refused URL/);
    t.equal(controls.connects.length, before + 1, `${route}: only the first (vetted) hop connected`);
  }
  t.notOk(existsSync(v('papers/redir-bad.pdf')));
});

t.test('refused before any connection: mixed DNS answers, http, credentials, private literals', async (t) => {
  const before = controls.connects.length;
  const cases: Array<[string, RegExp]> = [
    ['https://mixed.example.com/doc.pdf', /192\.168\.1\.20.*every DNS answer must be public/],
    ['https://mapped.example.com/doc.pdf', /IPv4-mapped address embedding 10\.1\.2\.3/],
    ['http://files.example.com/doc.pdf', /plain http/],
    ['https://user:secret@files.example.com/doc.pdf', /credentials/],
    ['https://files.example.com:444/doc.pdf', /port 444/],
    ['https://localhost/doc.pdf', /localhost/],
    ['https://[::ffff:127.0.0.1]/doc.pdf', /loopback is allowed only as/],
    ['https://10.0.0.1/doc.pdf', /private network/],
    ['file:///etc/passwd', /scheme "file"/],
  ];
  for (const [url, rule] of cases) {
    const r = refusalOf(await imp(url, 'papers/refused.pdf'))!;
    t.equal(r.code, 'url_refused', url);
    t.match(r.rule, rule, url);
    t.match(textOf(await imp(url, 'papers/refused.pdf')), /^Refused to fetch that URL: /);
  }
  t.equal(controls.connects.length, before, 'no connection was attempted');
  t.notOk(existsSync(v('papers/refused.pdf')));
});

t.test('size cap, truncated bodies, deadline and HTTP errors write nothing', async (t) => {
  const big = refusalOf(await imp('https://files.example.com/big', 'papers/big.bin'))!;
  t.equal(big.code, 'too_large');
  t.equal(big.limit, CAP);
  t.equal(refusalOf(await imp('https://files.example.com/big-declared', 'papers/big.bin'))!.code, 'too_large');
  const short = refusalOf(await imp('https://files.example.com/short', 'papers/short.bin'))!;
  t.equal(short.code, 'fetch_failed');
  const started = Date.now();
  const slow = refusalOf(await imp('https://files.example.com/slow', 'papers/slow.bin'))!;
  t.equal(slow.code, 'fetch_failed');
  t.match(slow.reason, /deadline/);
  t.ok(Date.now() - started < 5000);
  const missing = refusalOf(await imp('https://files.example.com/missing', 'papers/missing.bin'))!;
  t.match(missing.reason, /HTTP 404/);
  const nodns = refusalOf(await imp('https://nowhere.example.com/x', 'papers/nodns.bin'))!;
  t.equal(nodns.code, 'fetch_failed');
  for (const p of ['big.bin', 'short.bin', 'slow.bin', 'missing.bin', 'nodns.bin'])
    t.notOk(existsSync(v(`papers/${p}`)), p);
  writeFileSync(v('papers/keep.bin'), 'keep');
  t.equal(refusalOf(await imp('https://files.example.com/short', 'papers/keep.bin', true))!.code, 'fetch_failed');
  t.equal(readFileSync(v('papers/keep.bin'), 'utf8'), 'keep', 'a failed overwrite leaves the old bytes');
});

t.test('usage rows keep only the host of an imported URL', async (t) => {
  await imp('https://files.example.com/doc.pdf?token=s3cret', 'papers/audited.pdf');
  await server.host.audit.flush();
  const rows = await server.host.database.db
    .selectFrom('usage_logs')
    .select(['params'])
    .where('tool', '=', 'import_from_url')
    .execute();
  t.ok(rows.length > 3);
  t.ok(
    rows.every((r) => !/"url":"[^"]*[/?]/.test(String(r.params)) && !String(r.params).includes('s3cret')),
    'no path or query stored',
  );
  t.ok(rows.some((r) => String(r.params).includes('"url":"files.example.com"')));
});

t.test('no connection ever went to a denied address', async (t) => {
  t.equal(controls.deniedAttempts, 0);
  t.ok(controls.connects.every((c) => c.address === '127.0.0.1' || c.address === '::1'));
});
