// Startup checks and doctor: checkPlatform reports every guarantee on this machine, openVault refuses
// unsupported filesystems naming the reason, and the named-staging waiver path keeps every guarantee it can.

import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkPlatform, openVault } from '../../../src/host/vault/index.js';
import { kernelVersion } from '../../../src/host/vault/capabilities.js';
import { Refusal } from '../../../src/sdk/refusals.js';

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'exo-caps-')));
t.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }));

t.test('checkPlatform names every check and passes here', async (t) => {
  const { checks } = await checkPlatform(path.join(tmp, 'not-yet', 'created'));
  t.same(
    checks.map((c) => c.name),
    ['platform', 'native_addon', 'kernel', 'openat2', 'o_tmpfile', 'hard_links', 'rename_noreplace', 'statx_mount_id'],
  );
  for (const c of checks) t.ok(c.ok, `${c.name}: ${c.detail}`);
  t.notOk(fs.existsSync(path.join(tmp, 'not-yet')), 'doctor creates nothing');
  t.same(fs.readdirSync(tmp), [], 'probes leave nothing behind');
});

t.test('kernel version parsing', async (t) => {
  t.same(kernelVersion('6.18.44-fc-v857'), [6, 18]);
  t.same(kernelVersion('5.4.0-150-generic'), [5, 4]);
  t.same(kernelVersion('garbage'), [0, 0]);
});

t.test('openVault refuses a root it cannot use, naming why', async (t) => {
  const file = path.join(tmp, 'a-file');
  fs.writeFileSync(file, 'x');
  await t.rejects(openVault(file));
  const dev = await openVault('/proc/self').then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(dev instanceof Refusal && dev.code === 'unsupported_filesystem', '/proc is refused as unsupported_filesystem');
  t.match((dev as Refusal).details.reason, /o_tmpfile|hard_links/);
  fs.rmSync(file);
});

t.test('named staging (the allowNamedStaging waiver) keeps no-clobber and leaves no names', async (t) => {
  const root = path.join(tmp, 'named');
  const v = await openVault(root, { forceNamedStaging: true });
  t.match(v.capabilities, { tmpfile: false, namedStaging: true, engine: 'native' });
  const a = await v.create('n/a.md', Buffer.from('one'));
  t.equal(await v.create('n/a.md', Buffer.from('x')).catch((e: Refusal) => e.code), 'already_exists');
  const r = await v.replace('n/a.md', Buffer.from('two'), { expectedHash: a.contentHash });
  t.equal(r.previousHash, a.contentHash);
  t.equal(await v.readText('n/a.md'), 'two');
  t.same(fs.readdirSync(path.join(root, 'n')), ['a.md'], 'no staging names remain');
  // A crash leftover is swept by the walk.
  fs.writeFileSync(path.join(root, 'n', '.exo-stage-0123456789abcdef'), 'partial');
  const seen: string[] = [];
  for await (const e of v.walk()) seen.push(e.path);
  t.same(seen, ['n', 'n/a.md']);
  t.same(fs.readdirSync(path.join(root, 'n')), ['a.md'], 'the leftover was swept');
  await v.close();
});
