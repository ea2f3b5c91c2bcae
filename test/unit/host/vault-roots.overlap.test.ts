// Root overlap, as pure identity comparisons: symlinks are resolved before (examineRoot), and a bind
// mount of a folder below another root is caught through the mount table.
import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isRefusal } from '../../../src/sdk/refusals.js';
import {
  examineRoot,
  locateInFilesystem,
  overlapOf,
  parseMountTable,
  type RootIdentity,
} from '../../../src/host/vault/roots.js';

const MOUNTS = [
  '22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw',
  '30 22 8:2 / /data rw,relatime shared:2 - ext4 /dev/sdb1 rw',
  // /data/alice/notes bind-mounted at /srv/shared\\040box (a space in the mount point)
  '41 22 8:2 /alice/notes /srv/shared\\040box rw,relatime shared:2 - ext4 /dev/sdb1 rw',
].join('\n');

t.test('the mount table places a root inside its filesystem, through bind mounts', async (t) => {
  const mounts = parseMountTable(MOUNTS);
  t.equal(mounts[2].mountPoint, '/srv/shared box', 'octal escapes decoded');
  t.same(locateInFilesystem('/data/alice/notes/x', mounts), { device: '8:2', path: '/alice/notes/x' });
  t.same(locateInFilesystem('/srv/shared box/sub', mounts), { device: '8:2', path: '/alice/notes/sub' });
  t.same(locateInFilesystem('/home/bob', mounts), { device: '8:1', path: '/home/bob' });
  t.same(locateInFilesystem('/data', mounts), { device: '8:2', path: '/' });
});

const id = (root: string, chain: Array<[number, number]>, inFs?: [string, string]): RootIdentity => ({
  root,
  real: root,
  chain: chain.map(([dev, ino], i) => ({ path: `${root}#${i}`, dev, ino })),
  ...(inFs ? { inFilesystem: { device: inFs[0], path: inFs[1] } } : {}),
});

t.test('overlap by inode chain and by place in the filesystem', async (t) => {
  const alice = id(
    '/data/alice',
    [
      [2, 10],
      [2, 2],
      [1, 2],
    ],
    ['8:2', '/alice'],
  );
  const notes = id(
    '/data/alice/notes',
    [
      [2, 11],
      [2, 10],
      [2, 2],
      [1, 2],
    ],
    ['8:2', '/alice/notes'],
  );
  const bob = id(
    '/data/bob',
    [
      [2, 20],
      [2, 2],
      [1, 2],
    ],
    ['8:2', '/bob'],
  );
  t.equal(overlapOf(notes, alice), 'lies inside');
  t.equal(overlapOf(alice, notes), 'contains');
  t.equal(overlapOf(alice, alice), 'is the same folder as');
  t.equal(overlapOf(alice, bob), undefined, 'siblings are apart');
  // /srv/box is a bind mount of /data/alice/notes/deep: no shared inode on its chain, same filesystem place.
  const bound = id(
    '/srv/box',
    [
      [2, 99],
      [1, 50],
      [1, 2],
    ],
    ['8:2', '/alice/notes/deep'],
  );
  t.equal(overlapOf(bound, alice), 'lies inside', 'a bind mount below another root is caught');
  t.equal(overlapOf(alice, bound), 'contains');
  t.equal(
    overlapOf(
      id(
        '/x',
        [
          [2, 99],
          [1, 2],
        ],
        ['8:3', '/alice/notes/deep'],
      ),
      alice,
    ),
    undefined,
    'another device is apart',
  );
});

t.test('examineRoot resolves symlinks and refuses what is not a folder', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-roots-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, 'a/inner'), { recursive: true });
  symlinkSync(path.join(dir, 'a'), path.join(dir, 'link-to-a'));
  symlinkSync(path.join(dir, 'a/inner'), path.join(dir, 'link-into-a'));
  writeFileSync(path.join(dir, 'file'), 'x');
  const a = await examineRoot(path.join(dir, 'a'));
  t.equal(overlapOf(await examineRoot(path.join(dir, 'link-to-a')), a), 'is the same folder as');
  t.equal(overlapOf(await examineRoot(path.join(dir, 'link-into-a')), a), 'lies inside');
  t.equal(overlapOf(await examineRoot(dir), a), 'contains');
  for (const [p, reason] of [
    ['missing', /does not exist/],
    ['file', /not a folder/],
  ] as const) {
    const e = await examineRoot(path.join(dir, p)).catch((e: unknown) => e);
    t.ok(isRefusal(e) && (e as { code: string }).code === 'vault_root_unusable', `${p}: vault_root_unusable`);
    t.match((e as Error).message, reason);
  }
});
