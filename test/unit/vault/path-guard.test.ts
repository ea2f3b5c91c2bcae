// Path guard: every refusal reason, NFC/NFD preserved, and fast-check properties (an accepted path never
// resolves outside the root and never reaches a dot-folder).

import t from 'tap';
import fc from 'fast-check';
import path from 'node:path';
import { checkVaultPath, contentHash } from '../../../src/host/vault/index.js';
import { firstInvalidUtf8, resolveLinkText } from '../../../src/host/vault/path-guard.js';
import { Refusal } from '../../../src/sdk/refusals.js';

const refusedReason = (p: string): string | undefined => {
  try {
    checkVaultPath(p);
    return undefined;
  } catch (e) {
    if (!(e instanceof Refusal) || e.code !== 'invalid_path') throw e;
    return String(e.details.reason);
  }
};

t.test('refuses every bad spelling', async (t) => {
  const bad = [
    '',
    '/etc/passwd',
    '//x',
    '../x',
    'a/../../x',
    'a/..',
    '..',
    '.',
    './a',
    'a/./b',
    'a//b',
    'a/',
    'a\\b',
    '..\\x',
    'a\0b',
    '.obsidian/app.json',
    '.git/config',
    '.trash/x',
    'a/.hidden',
    '.',
    'x'.repeat(256),
    `${'a/'.repeat(2001)}b`,
    'a\ud800b',
  ];
  for (const p of bad) t.ok(refusedReason(p), `refused: ${JSON.stringify(p).slice(0, 60)} (${refusedReason(p)})`);
  const e = (() => {
    try {
      checkVaultPath('../x');
    } catch (e) {
      return e as Refusal;
    }
  })()!;
  t.equal(e.code, 'invalid_path');
  t.same(Object.keys(e.details).sort(), ['path', 'reason']);
});

t.test('accepts ordinary names and keeps them exactly as given', async (t) => {
  const nfc = 'caf\u00e9.md';
  const nfd = 'cafe\u0301.md';
  for (const p of [
    'a.md',
    'Daily/2024-01-01.md',
    '%2e%2e/x.md',
    'a./b..md',
    '\u2024\u2024/x',
    'x'.repeat(255),
    'with space/ok.md',
    nfc,
    nfd,
    'emoji 🧠.md',
  ]) {
    t.equal(checkVaultPath(p), p, JSON.stringify(p).slice(0, 40));
  }
  t.not(checkVaultPath(nfc), checkVaultPath(nfd), 'NFC and NFD are not normalised into each other');
});

t.test('contentHash is sha256: + 64 lowercase hex', async (t) => {
  t.equal(contentHash(Buffer.from('')), 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  t.match(contentHash(new Uint8Array([1, 2, 3])), /^sha256:[0-9a-f]{64}$/);
});

t.test('property: accepted paths stay beneath the root and out of dot-folders', async (t) => {
  const alphabet = fc.constantFrom(
    'a',
    'b',
    '.',
    '..',
    '/',
    '\\',
    '%2e',
    '\0',
    '~',
    ' ',
    '\u2024',
    'é',
    'e\u0301',
    '\uFF0E',
  );
  const arb = fc.oneof(
    fc.array(alphabet, { maxLength: 12 }).map((xs) => xs.join('')),
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 20 }),
  );
  const rootAbs = '/vault/root';
  fc.assert(
    fc.property(arb, (p) => {
      const r = refusedReason(p);
      if (r !== undefined) return true;
      const resolved = path.posix.resolve(rootAbs, p);
      return (
        resolved.startsWith(rootAbs + '/') &&
        path.posix.relative(rootAbs, resolved) === p &&
        !p.split('/').some((c) => c.startsWith('.'))
      );
    }),
    { numRuns: 3000 },
  );
  t.pass('3000 generated paths');
});

t.test('property: an accepted link target is where the link points, inside the vault', async (t) => {
  const seg = fc.constantFrom('a', 'b', '..', '.', '');
  fc.assert(
    fc.property(
      fc.array(seg, { maxLength: 6 }),
      fc.array(fc.constantFrom('x', 'y'), { maxLength: 3 }),
      (parts, dir) => {
        const text = parts.join('/');
        const r = resolveLinkText(dir.join('/'), text, '/vault');
        const real = path.posix.resolve('/vault', dir.join('/'), text);
        // Whenever a target is accepted it is exactly where the kernel would resolve it, inside the vault.
        return (
          r === undefined ||
          (path.posix.resolve('/vault', r) === real && (real === '/vault' || real.startsWith('/vault/')))
        );
      },
    ),
    { numRuns: 1000 },
  );
  t.equal(resolveLinkText('a', '../../x', '/vault'), undefined);
  t.equal(resolveLinkText('a', '/vault/b/c', '/vault'), 'b/c');
  t.equal(resolveLinkText('a', '/etc', '/vault'), undefined);
  t.equal(resolveLinkText('a/b', '../c', '/vault'), 'a/c');
});

t.test('firstInvalidUtf8 finds the first bad byte', async (t) => {
  t.equal(firstInvalidUtf8(Buffer.from('héllo')), -1);
  t.equal(firstInvalidUtf8(Buffer.from([0x61, 0x62, 0xff, 0x63])), 2);
  t.equal(firstInvalidUtf8(Buffer.from([0x61, 0xc3])), 1, 'truncated sequence');
  t.equal(firstInvalidUtf8(Buffer.from([0xed, 0xa0, 0x80])), 0, 'encoded surrogate');
  t.equal(firstInvalidUtf8(Buffer.from([0x61, 0xc0, 0xaf])), 1, 'overlong');
  t.equal(firstInvalidUtf8(Buffer.from([0xef, 0xbb, 0xbf, 0x61])), -1, 'BOM is valid');
});
