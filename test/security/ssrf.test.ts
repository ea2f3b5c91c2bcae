// The SSRF suite: hundreds of URL spellings and crafted DNS answer sets through the real importer with the
// production policy. The connector is a guard that throws on anything but loopback and counts attempts;
// the suite requires ≥ 200 cases and zero connection attempts to a denied address.
import t from 'tap';
import {
  ImportError,
  fetchUrl,
  nextHop,
  vettedAddress,
  type Connector,
  type DnsAnswer,
} from '../../src/sdk/ssrf/guarded-fetch.js';
import { vetUrl, type UrlPolicy } from '../../src/sdk/ssrf/url-policy.js';
import { deniedAddressRule } from '../../src/sdk/ssrf/ip-policy.js';

const policy: UrlPolicy = { allowHttp: false, maxUrlLength: 2048 };
const limits = { maxBytes: 1024, timeoutMs: 2000, maxRedirects: 5 };
const dns = new Map<string, DnsAnswer[]>();
let connectAttempts = 0;
let deniedConnects = 0;
const guard: Connector = async (req) => {
  connectAttempts++;
  if (deniedAddressRule(req.address, policy)) deniedConnects++;
  throw new Error(`test guard: no connection to ${req.address} allowed in this suite`);
};
const deps = { resolver: async (h: string) => dns.get(h) ?? [], connector: guard, policy };

let tried = 0;
async function expectRefused(t: { fail(message: string): unknown }, url: string, label = url): Promise<void> {
  tried++;
  try {
    await fetchUrl(url, deps, limits);
    t.fail(`${label}: was fetched`);
  } catch (e) {
    if (!(e instanceof ImportError) || e.kind !== 'refused')
      t.fail(`${label}: not refused by a rule (${(e as Error).message})`);
  }
}

// Denied IPv4 addresses: at least one per range, with edges.
const V4 = [
  '0.0.0.0',
  '0.255.255.255',
  '10.0.0.1',
  '10.255.255.254',
  '100.64.0.1',
  '100.127.255.254',
  '127.0.0.1',
  '127.255.255.254',
  '127.0.1.1',
  '169.254.169.254',
  '169.254.0.1',
  '172.16.0.1',
  '172.31.255.254',
  '192.0.0.8',
  '192.0.2.1',
  '192.88.99.1',
  '192.168.0.1',
  '192.168.255.254',
  '198.18.0.1',
  '198.19.255.254',
  '198.51.100.7',
  '203.0.113.9',
  '224.0.0.1',
  '239.255.255.250',
  '240.0.0.1',
  '255.255.255.255',
];
const octets = (a: string) => a.split('.').map(Number);
const asInt = (a: string) => octets(a).reduce((n, o) => n * 256 + o, 0);
function v4Spellings(a: string): string[] {
  const [w, x, y, z] = octets(a);
  const n = asInt(a);
  return [
    a,
    String(n),
    '0x' + n.toString(16),
    octets(a)
      .map((o) => '0' + o.toString(8))
      .join('.'),
    octets(a)
      .map((o) => '0x' + o.toString(16))
      .join('.'),
    `${w}.${x}.${y * 256 + z}`,
    `${w}.${x * 65536 + y * 256 + z}`,
    a.replace(/\./g, '\u3002'),
    a.replace(/[0-9]/g, (d) => String.fromCharCode(0xff10 + Number(d))),
  ];
}
const hex4 = (a: string) => {
  const [w, x, y, z] = octets(a);
  return `${((w << 8) | x).toString(16)}:${((y << 8) | z).toString(16)}`;
};
function v6Embeddings(a: string): string[] {
  return [
    `[::ffff:${a}]`,
    `[::ffff:${hex4(a)}]`,
    `[::${a}]`,
    `[2002:${hex4(a)}::1]`,
    `[64:ff9b::${a}]`,
    `[0:0:0:0:0:ffff:${a}]`,
  ];
}
const V6 = [
  '::1',
  '::',
  'fe80::1',
  'fc00::1',
  'fd12:3456::1',
  'ff02::1',
  '2001:db8::1',
  '100::1',
  'fec0::1',
  '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  '64:ff9b:1::1',
  '0:0:0:0:0:0:0:1',
  '::ffff:0:1',
];

t.test('IP literal hosts in every spelling are refused before any connection', async (t) => {
  for (const a of V4) {
    for (const s of v4Spellings(a)) await expectRefused(t, `https://${s}/x`, `${a} as ${s}`);
    for (const s of v6Embeddings(a)) await expectRefused(t, `https://${s}/x`, `${a} as ${s}`);
  }
  for (const a of V6) await expectRefused(t, `https://[${a}]/x`);
  await expectRefused(t, 'https://[fe80::1%25eth0]/x');
  await expectRefused(t, 'https://[::1]:8443/x');
});

t.test('special-use names, odd spellings, userinfo, schemes and ports are refused', async (t) => {
  const urls = [
    'https://localhost/',
    'https://LOCALHOST/',
    'https://localhost./',
    'https://api.localhost/',
    'https://ｌｏｃａｌｈｏｓｔ/',
    'https://localhost\u3002/',
    'https://printer.local/',
    'https://db.internal/',
    'https://metadata.google.internal/computeMetadata/v1/',
    'https://metadata/',
    'https://intranet/',
    'https://router.home.arpa/',
    'https://1.0.0.127.in-addr.arpa/',
    'https://example.123/',
    'https://example.0x7f/',
    'https://a..example.com/',
    'https://under_score.example.com/',
    'https://user@example.com/',
    'https://user:pass@example.com/',
    'https://@example.com/',
    'https://example.com@127.0.0.1/',
    'https://example.com\\@127.0.0.1/',
    'https://example.com%2f@127.0.0.1/',
    'https://ex%61mple.com/',
    'http://example.com/',
    'HTTP://example.com/',
    'ftp://example.com/',
    'file:///etc/passwd',
    'gopher://example.com/',
    'data:text/plain,hi',
    'javascript:alert(1)',
    'ws://example.com/',
    'wss://example.com/',
    'https://example.com:22/',
    'https://example.com:80/',
    'https://example.com:6379/',
    'https://example.com:0/',
    'https:///x',
    'https://',
    '//example.com/',
    'https://exa mple.com/',
    'https://example.com/\n',
    'https://' + 'a'.repeat(2100) + '.com/',
    '',
    'not a url',
  ];
  for (const u of urls) await expectRefused(t, u, JSON.stringify(u));
});

t.test('crafted DNS answers: every answer is vetted, mixed sets are refused', async (t) => {
  const publicA: DnsAnswer = { address: '93.184.216.34', family: 4 };
  const publicAAAA: DnsAnswer = { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 };
  let i = 0;
  const answerSets: DnsAnswer[][] = [];
  for (const a of V4) {
    answerSets.push(
      [{ address: a, family: 4 }],
      [publicA, { address: a, family: 4 }],
      [{ address: a, family: 4 }, publicA],
      [publicAAAA, publicA, { address: `::ffff:${a}`, family: 6 }],
    );
  }
  for (const a of V6) answerSets.push([{ address: a, family: 6 }], [publicA, { address: a, family: 6 }]);
  for (const set of answerSets) {
    const host = `h${i++}.example.com`;
    dns.set(host, set);
    await expectRefused(t, `https://${host}/file.pdf`, `${host} → ${set.map((x) => x.address).join(', ')}`);
  }
  dns.set('empty.example.com', []);
  tried++;
  const empty = await fetchUrl('https://empty.example.com/', deps, limits).catch((e: unknown) => e);
  t.ok(empty instanceof ImportError && empty.kind === 'failed', 'no answers is a failure, not a connection');
});

t.test('redirect targets are judged as the server spelled them', async (t) => {
  const base = new URL('https://files.example.com/a/b');
  const spelled = [
    '//2130706433/',
    '\\\\0x7f000001/',
    'https://0177.0.0.1/',
    'https://[::ffff:7f00:1]/',
    'http://files.example.com/',
    'https://u:p@files.example.com/',
  ];
  for (const loc of spelled) {
    tried++;
    t.throws(() => vetUrl(nextHop(loc, base), policy), { name: 'UrlRefusedError' }, loc);
  }
  t.equal(nextHop('/c', base), 'https://files.example.com/c');
  t.equal(nextHop('d', base), 'https://files.example.com/a/d');
});

t.test('public targets still pass vetting (the rules are not a blanket ban)', async (t) => {
  dns.set('public.example.com', [
    { address: '93.184.216.34', family: 4 },
    { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
  ]);
  const target = vetUrl('https://public.example.com/doc.pdf', policy);
  t.same(await vettedAddress(target, deps), { address: '93.184.216.34', family: 4 });
  t.equal(vetUrl('https://ＰＵＢＬＩＣ．example．com:8443/x', policy).host, 'public.example.com');
  t.equal(vetUrl('https://bücher.example.com/', policy).host, 'xn--bcher-kva.example.com');
  t.equal(vetUrl('https://8.8.8.8/', policy).ip, '8.8.8.8');
  t.equal(vetUrl('https://[2606:4700::1111]/', policy).ip, '2606:4700::1111');
  t.equal(vetUrl('http://example.com:8080/', { ...policy, allowHttp: true }).port, 8080);
  t.equal(deniedAddressRule('64:ff9b::808:808'), undefined, 'NAT64 of a public address is public');
});

t.test('tally', async (t) => {
  t.comment(
    `ssrf spellings and answer sets tried: ${tried}; connection attempts: ${connectAttempts}; to denied addresses: ${deniedConnects}`,
  );
  t.ok(tried >= 200, `at least 200 cases (${tried})`);
  t.equal(deniedConnects, 0, 'no connection was attempted to a denied address');
  t.equal(connectAttempts, 0, 'no connection was attempted at all');
});
