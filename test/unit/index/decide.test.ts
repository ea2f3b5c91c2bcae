// decide(): prepared items against what the index holds → operations. Pure, so pinned here without a
// database: unchanged skips, mtime-only touches, renames by hash within a batch, stale bases, quarantine.
import t from 'tap';
import { parseNote } from '../../../src/markdown/index.js';
import { decide } from '../../../src/host/index/decide.js';
import type { Prepared } from '../../../src/host/index/prepare.js';
import type { CachedNote, QuarantinedNote } from '../../../src/host/index/types.js';

const model = (path: string) => parseNote('# T\n', { path });
const content = (path: string, hash: string, baseHash: string | undefined, parsed = true): Prepared => ({
  kind: 'content',
  path,
  hash,
  size: 4,
  mtimeMs: 1000,
  baseHash,
  ...(parsed ? { model: model(path) } : {}),
});

t.test('unchanged bytes are skipped; a new mtime only touches the row', async (t) => {
  const cache = new Map<string, CachedNote>([
    ['a.md', { id: 1, hash: 'h1', size: 4, mtimeMs: 1000 }],
    ['b.md', { id: 2, hash: 'h2', size: 4, mtimeMs: 500 }],
  ]);
  const d = decide([content('a.md', 'h1', 'h1', false), content('b.md', 'h2', 'h2', false)], cache, new Map());
  t.equal(d.unchanged, 1);
  t.same(
    d.ops.map((o) => [o.op, o.path]),
    [['touch', 'b.md']],
  );
});

t.test('the same hash vanishing and appearing in one batch is a rename', async (t) => {
  const cache = new Map<string, CachedNote>([['old.md', { id: 7, hash: 'hx', size: 4, mtimeMs: 1 }]]);
  const d = decide(
    [{ kind: 'gone', path: 'old.md', baseHash: 'hx' }, content('new.md', 'hx', undefined)],
    cache,
    new Map(),
  );
  t.equal(d.ops.length, 1);
  const op = d.ops[0];
  t.equal(op.op, 'rename');
  if (op.op === 'rename') {
    t.equal(op.from, 'old.md');
    t.equal(op.prev.id, 7);
  }
});

t.test('a different hash is a remove plus an upsert', async (t) => {
  const cache = new Map<string, CachedNote>([['old.md', { id: 7, hash: 'hx', size: 4, mtimeMs: 1 }]]);
  const d = decide(
    [{ kind: 'gone', path: 'old.md', baseHash: 'hx' }, content('new.md', 'hy', undefined)],
    cache,
    new Map(),
  );
  t.same(d.ops.map((o) => o.op).sort(), ['remove', 'upsert']);
});

t.test('a move hint renames onto an indexed destination, replacing it', async (t) => {
  const cache = new Map<string, CachedNote>([
    ['from.md', { id: 1, hash: 'ha', size: 4, mtimeMs: 1 }],
    ['to.md', { id: 2, hash: 'hb', size: 4, mtimeMs: 1 }],
  ]);
  const d = decide(
    [{ kind: 'gone', path: 'from.md', baseHash: 'ha' }, content('to.md', 'ha', 'hb')],
    cache,
    new Map(),
    new Map([['to.md', 'from.md']]),
  );
  t.equal(d.ops.length, 1);
  const op = d.ops[0];
  t.ok(op.op === 'rename' && op.replaces?.id === 2 && op.prev.id === 1);
});

t.test('an item read against a stale base is handed back', async (t) => {
  const cache = new Map<string, CachedNote>([['a.md', { id: 1, hash: 'newer', size: 4, mtimeMs: 1 }]]);
  const d = decide([content('a.md', 'h0', 'older')], cache, new Map());
  t.same(d.redo, ['a.md']);
  t.same(d.ops, []);
});

t.test('quarantine: recorded once, cleared when the file is gone, replaces an indexed row', async (t) => {
  const q = new Map<string, QuarantinedNote>([['bad.md', { reason: 'not_utf8: x', hash: 'hq', size: 3, mtimeMs: 9 }]]);
  const same: Prepared = {
    kind: 'quarantine',
    path: 'bad.md',
    reason: 'not_utf8: x',
    hash: 'hq',
    size: 3,
    mtimeMs: 9,
    baseHash: undefined,
  };
  t.equal(decide([same], new Map(), q).unchanged, 1, 'same facts: nothing to write');
  t.same(decide([{ kind: 'gone', path: 'bad.md', baseHash: undefined }], new Map(), q).ops, [
    { op: 'unquarantine', path: 'bad.md' },
  ]);
  const cache = new Map<string, CachedNote>([['was-good.md', { id: 3, hash: 'g', size: 1, mtimeMs: 1 }]]);
  const d = decide(
    [
      {
        kind: 'quarantine',
        path: 'was-good.md',
        reason: 'too_large: big',
        hash: null,
        size: 9e6,
        mtimeMs: 2,
        baseHash: 'g',
      },
    ],
    cache,
    new Map(),
  );
  t.ok(d.ops[0].op === 'quarantine' && d.ops[0].prev?.id === 3, 'the stale row goes with it');
});
