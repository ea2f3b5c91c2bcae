// The listener's Host check (DNS rebinding protection) parses the header with the WHATWG URL parser and
// accepts only an exact host[:port]: junk after an IPv6 literal or a userinfo trick is refused, never
// mistaken for loopback (issue 35).
import t from 'tap';
import { hostCheck, parseHostHeader } from '../../../../src/host/http/host-check.js';

t.test('only an exact host[:port] parses', async (t) => {
  t.same(parseHostHeader('127.0.0.1:45123'), { host: '127.0.0.1:45123', hostname: '127.0.0.1' });
  t.same(parseHostHeader('[::1]:3000'), { host: '[::1]:3000', hostname: '[::1]' });
  t.same(parseHostHeader('Vault.Example.org'), { host: 'vault.example.org', hostname: 'vault.example.org' });
  for (const bad of [
    '[::1]evil.example',
    '127.0.0.1:45123@evil',
    'user@localhost',
    'localhost/x',
    'localhost?x',
    'localhost#x',
    '[::1',
    'localhost:99999',
    'localhost: 80',
    '127.1',
    '',
    undefined,
  ])
    t.equal(parseHostHeader(bad), undefined, JSON.stringify(bad));
});

t.test('loopback, server.allowedHosts and the public host pass; nothing else', async (t) => {
  const allowed = hostCheck(['vault.example.org', 'other.example:8443'], 'https://pub.example.org');
  for (const ok of [
    'localhost',
    'localhost:3737',
    '127.0.0.1:45123',
    '[::1]:3000',
    'vault.example.org:9',
    'other.example:8443',
    'pub.example.org',
  ])
    t.ok(allowed(ok), ok);
  for (const no of [
    '[::1]evil.example',
    '127.0.0.1:45123@evil',
    'evil.example:80',
    'other.example',
    'localhost.evil.example',
  ])
    t.notOk(allowed(no), no);
});

t.test('a remembered header answers as the first check did; refused headers stay refused', async (t) => {
  const check = hostCheck(['vault.example.org'], null);
  for (let round = 0; round < 3; round++) {
    t.equal(check('localhost:8787'), true);
    t.equal(check('vault.example.org'), true);
    t.equal(check('evil.example'), false);
    t.equal(check('[::1]evil.example'), false);
    t.equal(check(undefined), false);
  }
  for (let i = 0; i < 200; i++) check(`localhost:${1000 + i}`);
  t.equal(check('localhost:5000'), true, 'past the bound, a header is parsed again');
  t.equal(check('evil.example'), false);
});
