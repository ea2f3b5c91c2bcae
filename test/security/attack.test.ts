// Attack suite: traversal in every spelling, symlinks (final and intermediate, in and out of the vault,
// magic links), hard links, dot-folder reach attempts, and a racing child process that swaps a folder
// for a symlink during operations. Counts attempts and escapes (goal: >= 10,000 attempts, 0 escapes).

import t from 'tap';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openVault } from '../../src/host/vault/index.js';
import { isRefusal } from '../../src/sdk/refusals.js';
import { ADDON } from '../fixtures/bundle.js';

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'exo-attack-')));
t.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }));
const outside = path.join(tmp, 'outside');
const root = path.join(tmp, 'vault');
const SECRETS = ['TOP-SECRET', 'OUTSIDE-ORIGINAL', 'DOT-PRIVATE', 'root:x:0'];

function snapshot(dir: string): string {
  const out: string[] = [];
  const visit = (d: string, rel: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(d, e.name);
      const r = `${rel}/${e.name}`;
      if (e.isDirectory()) {
        out.push(`${r}/`);
        visit(p, r);
      } else if (e.isSymbolicLink()) out.push(`${r} -> ${fs.readlinkSync(p)}`);
      else {
        const st = fs.statSync(p);
        out.push(`${r} ${st.ino} ${fs.readFileSync(p, 'latin1')}`);
      }
    }
  };
  visit(dir, '');
  return out.join('\n');
}

function setup(): void {
  fs.mkdirSync(path.join(outside, 'sub'), { recursive: true });
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'TOP-SECRET');
  fs.writeFileSync(path.join(outside, 'target.md'), 'OUTSIDE-ORIGINAL');
  fs.writeFileSync(path.join(outside, 'hl.txt'), 'HARDLINK-SHARED');
  fs.mkdirSync(path.join(root, 'notes'), { recursive: true });
  fs.mkdirSync(path.join(root, 'real'), { recursive: true });
  fs.mkdirSync(path.join(root, '.obsidian'), { recursive: true });
  fs.mkdirSync(path.join(root, '.git'), { recursive: true });
  fs.mkdirSync(path.join(root, '.trash'), { recursive: true });
  fs.writeFileSync(path.join(root, '.obsidian', 'app.json'), 'DOT-PRIVATE');
  fs.writeFileSync(path.join(root, '.git', 'config'), 'DOT-PRIVATE');
  fs.writeFileSync(path.join(root, '.trash', 'old.md'), 'DOT-PRIVATE');
  fs.writeFileSync(path.join(root, 'notes', 'a.md'), 'inside a');
  fs.writeFileSync(path.join(root, 'real', 'inner.md'), 'inside inner');
  fs.symlinkSync('../outside', path.join(root, 'evil'));
  fs.symlinkSync(outside, path.join(root, 'abs'));
  fs.symlinkSync('evil', path.join(root, 'hop'));
  fs.symlinkSync('real', path.join(root, 'good'));
  fs.symlinkSync('/proc/self/root', path.join(root, 'proc'));
  fs.symlinkSync('.obsidian', path.join(root, 'dotlink'));
  fs.symlinkSync('../../outside/secret.txt', path.join(root, 'notes', 'up'));
  fs.symlinkSync(path.join(outside, 'target.md'), path.join(root, 'notes', 'absup.md'));
  fs.symlinkSync('a.md', path.join(root, 'notes', 'in'));
  fs.linkSync(path.join(outside, 'hl.txt'), path.join(root, 'hl.md'));
}

const PREFIXES = [
  '',
  '../',
  '../../',
  '..\\',
  '..\\..\\',
  '%2e%2e/',
  '%2e%2e%2f',
  '/',
  '//',
  './',
  '.../',
  'a/../',
  'a/./',
  'notes//',
  'evil/',
  'abs/',
  'hop/',
  'proc/',
  'dotlink/',
  'good/../evil/',
  'real/../../',
  '.trash/',
  '.obsidian/',
  '.git/',
  '\u2024\u2024/',
  '\uFF0E\uFF0E/',
  '\u2025/',
  '..\u2215',
  '..\u2044',
  'notes/up/',
  'a.\u0000/',
  'x'.repeat(260) + '/',
  `${outside}/`,
  '~/',
  'C:\\',
  'file:///',
  '\u202e../',
  ' ../',
  '.. /',
  'notes/../../',
  'a./..',
];
const MIDDLES = ['', 'evil/', 'notes/', 'good/', '../'];
const TARGETS = [
  'secret.txt',
  'target.md',
  'outside/secret.txt',
  'sub/x.md',
  'new.md',
  'etc/passwd',
  '',
  '.',
  '..',
  'app.json',
  'config',
  'hl.md',
  'up',
  'in',
  'absup.md',
  'evil',
  'abs',
];

function attackPaths(): string[] {
  const set = new Set<string>();
  for (const p of PREFIXES) for (const m of MIDDLES) for (const x of TARGETS) set.add(p + m + x);
  for (const extra of [
    'notes/up',
    'notes/absup.md',
    'notes/in',
    'evil',
    'abs',
    'hop',
    'proc',
    'proc/etc/passwd',
    'dotlink/app.json',
    'good/inner.md',
    'hl.md',
    '.',
    '..',
    '',
    'notes/',
    'notes/a.md/',
    'notes/a.md/..',
    'x'.repeat(256),
    `${'d/'.repeat(2100)}x`,
  ])
    set.add(extra);
  return [...set];
}

t.test('attack matrix and racing swap: 0 escapes', async (t) => {
  setup();
  const vault = await openVault(root);
  const outsideBefore = snapshot(outside);
  const dotBefore = ['.obsidian', '.git'].map((d) => snapshot(path.join(root, d))).join('\n');
  const outsideInos = new Set(['secret.txt', 'target.md'].map((f) => fs.statSync(path.join(outside, f)).ino));
  let attempts = 0;
  let refused = 0;
  const escapes: string[] = [];
  const leaked = (s: string) => SECRETS.some((x) => s.includes(x));
  const insideVault = (rel: string) => {
    try {
      return fs.realpathSync(path.dirname(path.join(root, rel))).startsWith(root);
    } catch {
      return true;
    }
  };
  const attempt = async (label: string, op: () => Promise<unknown>, check?: (r: unknown) => void) => {
    attempts++;
    try {
      const r = await op();
      check?.(r);
    } catch (e) {
      if (isRefusal(e)) refused++;
      else escapes.push(`${label}: unexpected error ${(e as Error).message}`);
    }
  };
  const checkOutside = (label: string) => {
    if (snapshot(outside) !== outsideBefore) escapes.push(`${label}: the outside tree changed`);
  };
  const paths = attackPaths();
  const body = Buffer.from('ATTACK');
  for (const p of paths) {
    await attempt(
      `readText ${p}`,
      () => vault.readText(p),
      (r) => {
        if (leaked(String(r))) escapes.push(`readText ${JSON.stringify(p)} leaked`);
      },
    );
    await attempt(
      `readBytes ${p}`,
      () => vault.readBytes(p),
      (r) => {
        if (leaked(String(r))) escapes.push(`readBytes ${JSON.stringify(p)} leaked`);
      },
    );
    await attempt(
      `stat ${p}`,
      () => vault.stat(p),
      (r) => {
        if (outsideInos.has((r as { ino: number }).ino)) escapes.push(`stat ${JSON.stringify(p)} reached outside`);
      },
    );
    await attempt(`exists ${p}`, () => vault.exists(p));
    await attempt(
      `list ${p}`,
      () => vault.list(p, { recursive: true }),
      (r) => {
        for (const e of r as Array<{ path: string }>)
          if (!insideVault(e.path) || e.path.split('/').some((c) => c.startsWith('.')))
            escapes.push(`list ${JSON.stringify(p)} showed ${e.path}`);
      },
    );
  }
  for (const p of paths) {
    await attempt(`create ${p}`, () => vault.create(p, body));
    await attempt(`replace ${p}`, () => vault.replace(p, body));
    await attempt(`mkdirp ${p}`, () => vault.mkdirp(p));
    await attempt(`move to ${p}`, async () => {
      await vault.create('mover.md', body).catch(() => undefined);
      await vault.move('mover.md', p);
    });
    await attempt(`move from ${p}`, () => vault.move(p, 'moved-in.md'));
    await attempt(`trash ${p}`, () => vault.trash(p));
    await attempt(`unlink ${p}`, () => vault.unlink(p));
    checkOutside(`writes on ${JSON.stringify(p)}`);
  }
  // Hard link: replacing the in-vault name must not touch the shared outside inode.
  fs.rmSync(path.join(root, 'hl.md'), { force: true });
  fs.linkSync(path.join(outside, 'hl.txt'), path.join(root, 'hl.md'));
  await attempt('replace hard link', () => vault.replace('hl.md', body));
  if (fs.readFileSync(path.join(outside, 'hl.txt'), 'utf8') !== 'HARDLINK-SHARED')
    escapes.push('replace wrote through a hard link');
  checkOutside('hard link');
  const matrixAttempts = attempts;

  // TOCTOU: a child swaps race/ (a real folder) and a symlink to outside/ with RENAME_EXCHANGE, nonstop.
  fs.mkdirSync(path.join(root, 'race'));
  fs.writeFileSync(path.join(root, 'race', 'secret.txt'), 'inside race');
  fs.writeFileSync(path.join(root, 'race', 'target.md'), 'inside race target');
  fs.symlinkSync(outside, path.join(root, 'race-link'));
  const racer = `const n = require(process.argv[1]); const [v] = process.argv.slice(2); let k = 0;
    const go = () => n.renameat2(-100, v + '/race', -100, v + '/race-link', 2).then(() => { k++; setImmediate(go); }, (e) => { console.error(e.message); process.exit(1); });
    for (let i = 0; i < 2; i++) go(); process.on('SIGTERM', () => { console.log(k); process.exit(0); });`;
  const child = spawn(
    '/bin/sh',
    ['-c', 'unset NODE_OPTIONS; exec "$0" "$@"', process.execPath, '-e', racer, ADDON, root],
    { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let swaps = '';
  child.stdout.on('data', (d: Buffer) => (swaps += d.toString()));
  const childExit = new Promise<void>((r) => child.on('exit', () => r()));
  await new Promise((r) => setTimeout(r, 150));
  const deadline = Date.now() + 4000;
  let k = 0;
  while (Date.now() < deadline) {
    k++;
    await Promise.all([
      attempt(
        'race readText',
        () => vault.readText('race/secret.txt'),
        (r) => {
          if (leaked(String(r))) escapes.push('race read leaked');
        },
      ),
      attempt('race readText deep', () => vault.readText('race/sub/../secret.txt')),
      attempt(
        'race stat',
        () => vault.stat('race/target.md'),
        (r) => {
          if (outsideInos.has((r as { ino: number }).ino)) escapes.push('race stat reached outside');
        },
      ),
      attempt(
        'race list',
        () => vault.list('race', { recursive: true }),
        (r) => {
          for (const e of r as Array<{ path: string }>)
            if (e.path.endsWith('/sub') || e.path.endsWith('hl.txt')) escapes.push(`race list showed ${e.path}`);
        },
      ),
      attempt('race create', () => vault.create(`race/new-${k}.md`, body)),
      attempt('race create nested', () => vault.create(`race/nest/deep-${k}.md`, body)),
      attempt('race replace', () => vault.replace('race/target.md', Buffer.from(`inside race target ${k}`))),
      attempt('race mkdirp', () => vault.mkdirp(`race/dir-${k}`)),
      attempt('race move', async () => {
        await vault.create(`mv-${k}.md`, body);
        await vault.move(`mv-${k}.md`, `race/mv-${k}.md`);
      }),
      attempt('race trash', () => vault.trash(`race/new-${k - 1}.md`)),
      attempt('race unlink', () => vault.unlink(`race/mv-${k - 1}.md`)),
    ]);
    if (k % 25 === 0) checkOutside('race');
  }
  child.kill('SIGTERM');
  await childExit;
  checkOutside('race (final)');
  const dotAfter = ['.obsidian', '.git'].map((d) => snapshot(path.join(root, d))).join('\n');
  if (dotAfter !== dotBefore) escapes.push('a dot folder (.obsidian/.git) changed');
  if (fs.readFileSync(path.join(root, '.trash', 'old.md'), 'utf8') !== 'DOT-PRIVATE')
    escapes.push('.trash content was touched');
  await vault.close();
  t.comment(
    `attack suite: ${attempts} attempts (${matrixAttempts} matrix over ${paths.length} paths, ${attempts - matrixAttempts} during ${Number(swaps.trim()) || '?'} racing swaps), ${refused} refused, ${escapes.length} escapes`,
  );
  t.ok(attempts >= 10_000, `${attempts} attempts`);
  t.ok(Number(swaps.trim()) > 100, 'the racer really swapped');
  t.same([...new Set(escapes)].slice(0, 20), [], '0 escapes');
});
