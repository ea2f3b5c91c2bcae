// Concurrency: many writers replacing one note with expectedHash, in one process and across processes;
// no update is lost (every successful append is in the final note, exactly once).

import t from 'tap';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openVault } from '../../src/host/vault/index.js';
import { isRefusal } from '../../src/sdk/refusals.js';
import { ADDON, bundleFixture } from '../fixtures/bundle.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'exo-conc-'));
t.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }));

function lines(text: string): string[] {
  return text.split('\n').filter((l) => l && l !== 'start');
}

t.test('in-process: 32 writers x 8 appends, no lost update', async (t) => {
  const v = await openVault(path.join(tmp, 'one'));
  await v.create('shared.md', Buffer.from('start\n'));
  let stale = 0;
  const writer = async (w: number) => {
    let ok = 0;
    for (let n = 0; n < 8; n++) {
      for (;;) {
        const cur = await v.readBytes('shared.md');
        try {
          await v.replace('shared.md', Buffer.concat([cur, Buffer.from(`w${w}-${n}\n`)]), {
            expectedHash: v.contentHash(cur),
          });
          ok++;
          break;
        } catch (e) {
          if (isRefusal(e) && (e.code === 'stale_precondition' || e.code === 'concurrent_write')) {
            stale++;
            continue;
          }
          throw e;
        }
      }
    }
    return ok;
  };
  const oks = await Promise.all(Array.from({ length: 32 }, (_, w) => writer(w)));
  const final = lines(await v.readText('shared.md'));
  const total = oks.reduce((a, b) => a + b, 0);
  t.equal(final.length, total, `${total} successful appends all present (${stale} refused as stale and retried)`);
  t.equal(new Set(final).size, final.length, 'no append applied twice');
  await v.close();
});

t.test('cross-process: 4 processes x 40 appends, no lost update', async (t) => {
  const root = path.join(tmp, 'multi');
  const v = await openVault(root);
  await v.create('shared.md', Buffer.from('start\n'));
  const script = await bundleFixture('vault-append-writer.ts', path.join(tmp, 'append.mjs'));
  const run = (tag: string) =>
    new Promise<number>((resolve, reject) => {
      const child = spawn(
        '/bin/sh',
        ['-c', 'unset NODE_OPTIONS; exec "$0" "$@"', process.execPath, script, root, 'shared.md', tag, '40'],
        {
          env: { PATH: process.env.PATH ?? '', EXOCORTEX_NATIVE_ADDON: ADDON },
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.on('exit', (code) =>
        code === 0 ? resolve(Number(out.trim())) : reject(new Error(`writer ${tag} exited ${code}`)),
      );
    });
  const oks = await Promise.all(['p0', 'p1', 'p2', 'p3'].map(run));
  const final = lines(await v.readText('shared.md'));
  t.equal(
    final.length,
    oks.reduce((a, b) => a + b, 0),
    'every successful append from every process is present',
  );
  t.equal(new Set(final).size, final.length, 'no append applied twice');
  for (const tag of ['p0', 'p1', 'p2', 'p3'])
    t.equal(final.filter((l) => l.startsWith(`${tag}-`)).length, 40, `${tag}: 40 appends`);
  await v.close();
});
