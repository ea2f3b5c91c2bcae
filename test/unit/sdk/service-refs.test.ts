// Typed service refs: the runtime side (ids, optional(), parseRequirement over refs and names) and the type
// test (service-refs.test-d.ts) that compiles only while ctx.service(ref) is typed by the ref.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import {
  EMBEDDINGS,
  INDEX,
  NOTE_WRITER,
  optional,
  parseRequirement,
  serviceName,
  serviceRef,
  WRITE_OBSERVERS,
} from '../../../src/sdk/index.js';

const root = path.resolve(import.meta.dirname, '../../..');

t.test('refs and requirements', async (t) => {
  t.same(
    [INDEX.id, NOTE_WRITER.id, EMBEDDINGS.id, WRITE_OBSERVERS.id],
    ['index', 'note-writer', 'embeddings', 'write-observers'],
    'the wire names are unchanged',
  );
  t.same(parseRequirement(INDEX), { name: 'index', optional: false });
  t.same(parseRequirement(optional(EMBEDDINGS)), { name: 'embeddings', optional: true });
  t.same(parseRequirement('embeddings?'), { name: 'embeddings', optional: true }, 'the string form still parses');
  t.same(parseRequirement('index'), { name: 'index', optional: false });
  t.equal(serviceName(optional(INDEX)), 'index');
  t.throws(() => serviceRef('Bad Name'), /must match/);
  t.ok(Object.isFrozen(serviceRef('x-y')));
});

t.test('the type test compiles, each expected error included', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'exo-service-refs-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n');
  writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: path.join(root, 'tsconfig.json'),
      compilerOptions: { noEmit: true, rootDir: '/', typeRoots: [path.join(root, 'node_modules/@types')] },
      files: [path.join(root, 'test/unit/sdk/service-refs.test-d.ts')],
      include: [],
    }),
  );
  const r = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', dir], {
    cwd: dir,
    encoding: 'utf8',
  });
  t.equal(r.status, 0, `${r.stdout}${r.stderr}`);
});
