// The vault watcher's ignore list, as @parcel/watcher applies it: nothing under a dot entry (`.obsidian`, a
// nested `.git`, a dot folder made after the subscription) reaches the subscription, while names that merely
// hold a dot (`a.b/`, `x.md`) do.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import parcelWatcher from '@parcel/watcher';
import { WATCH_IGNORE } from '../../../src/host/index/watcher.js';

t.test('nothing under a dot entry is reported; names holding a dot are', async (t) => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'exo-watch-ignore-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(path.join(root, '.obsidian/plugins/p'), { recursive: true });
  mkdirSync(path.join(root, 'Projects/code/.git/objects'), { recursive: true });
  mkdirSync(path.join(root, 'a.b'), { recursive: true });
  const seen: string[] = [];
  const sub = await parcelWatcher.subscribe(
    root,
    (err, events) => {
      if (!err) for (const e of events) seen.push(path.relative(root, e.path).split(path.sep).join('/'));
    },
    { ignore: [...WATCH_IGNORE] },
  );
  t.teardown(() => sub.unsubscribe());
  writeFileSync(path.join(root, '.obsidian/app.json'), '{}');
  writeFileSync(path.join(root, '.obsidian/plugins/p/data.json'), '{}');
  writeFileSync(path.join(root, 'Projects/code/.git/objects/ab'), 'x');
  writeFileSync(path.join(root, '.hidden.md'), 'x');
  mkdirSync(path.join(root, 'Later/.cache/deep'), { recursive: true });
  writeFileSync(path.join(root, 'Later/.cache/deep/x.md'), 'x');
  writeFileSync(path.join(root, 'a.b/x.md'), 'x');
  writeFileSync(path.join(root, 'Projects/code/readme.md'), 'x');
  const want = ['a.b/x.md', 'Projects/code/readme.md'];
  const deadline = Date.now() + 10_000;
  while (!want.every((p) => seen.includes(p)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  // Events of one burst arrive together; give a late one time to show.
  await new Promise((r) => setTimeout(r, 300));
  t.same(
    want.filter((p) => !seen.includes(p)),
    [],
    'the notes outside dot entries are reported',
  );
  t.same(
    seen.filter((p) => p.split('/').some((s) => s.startsWith('.'))),
    [],
    'nothing under a dot entry is',
  );
});
