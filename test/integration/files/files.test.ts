// The files family end to end over HTTP with the SDK client: read (text windows, images, base64, hash),
// write (no-clobber, checked overwrite, caps, markdown refused), list (ls-style, globs, caps), delete.
import t from 'tap';
import { existsSync, readFileSync, readdirSync, symlinkSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { refusalOf, textOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const family = path.resolve(here, '../../../plugins/files');
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);
const BIN = Buffer.from([0, 1, 2, 3, 254, 255, 0, 7]);
const MAX_WRITE = 1024 * 1024;

const server = await startTestServer({
  builtinDir: null,
  config: {
    plugins: [family],
    files: { maxWriteBytes: MAX_WRITE, maxReadBytes: 2 * 1024 * 1024, textWindowChars: 100, maxListEntries: 50 },
  },
  files: {
    'data/table.csv': 'a,b\n' + '1,2\n'.repeat(60),
    'data/émoji.txt': '😀'.repeat(60),
    'img/dot.png': PNG,
    'bin/blob.dat': BIN,
    'bin/big.dat': Buffer.alloc(3 * 1024 * 1024, 1),
    'notes/note.md': '# A note\n',
    '.hidden/secret.txt': 'no',
    '.dotfile': 'no',
    'docs/a.pdf': '%PDF-1.4 fake',
    'docs/deep/b.pdf': '%PDF-1.4 fake 2',
  },
});
t.teardown(() => server.close());
const client = await server.connect();
const readOnly = await server.connect({ key: server.readKey });
type Result = { isError?: boolean; content?: unknown; structuredContent?: unknown };
const call = async (name: string, args: Record<string, unknown>, c = client) =>
  (await c.callTool({ name, arguments: args })) as Result;
const v = (p: string) => path.join(server.vaultDir, p);

t.test('the five tools are listed with explicit hints; read-only keys see only the readers', async (t) => {
  const names = (await client.listTools()).tools.map((x) => x.name).sort();
  t.same(names, ['delete_file', 'list_files', 'move_file', 'read_file', 'write_file']);
  const ro = (await readOnly.listTools()).tools.map((x) => x.name).sort();
  t.same(ro, ['list_files', 'read_file']);
});

t.test('read_file: text windows with truncation as data', async (t) => {
  const r = await call('read_file', { path: 'data/table.csv' });
  const o = r.structuredContent as Record<string, any>;
  t.equal(o.kind, 'text');
  t.equal(o.mime, 'text/csv');
  t.equal(o.returned, 100);
  t.equal(o.truncated, true);
  t.equal(o.next_offset, 100);
  t.match(o.content_hash, /^sha256:[0-9a-f]{64}$/);
  const next = (await call('read_file', { path: 'data/table.csv', offset: 240, limit: 100 }))
    .structuredContent as Record<string, any>;
  t.equal(next.truncated, false);
  t.equal(next.next_offset, null);
  t.equal(next.content, readFileSync(v('data/table.csv'), 'utf8').slice(240));
  const emoji = (await call('read_file', { path: 'data/émoji.txt', limit: 3 })).structuredContent as Record<
    string,
    any
  >;
  t.equal(emoji.returned, 2, 'a surrogate pair is never cut');
  t.match(textOf(r), /truncated: true — continue with offset=100/);
});

t.test('read_file: images as an image block, binaries as base64 with a header, hash_only', async (t) => {
  const img = await call('read_file', { path: 'img/dot.png' });
  const blocks = img.content as Array<{ type: string; data?: string; mimeType?: string }>;
  const block = blocks.find((b) => b.type === 'image')!;
  t.equal(block.mimeType, 'image/png');
  t.equal(Buffer.from(block.data!, 'base64').compare(PNG), 0);
  t.notOk(JSON.stringify(img.structuredContent).includes(block.data!.slice(0, 40)), 'image bytes are not sent twice');
  const bin = await call('read_file', { path: 'bin/blob.dat' });
  const o = bin.structuredContent as Record<string, any>;
  t.equal(o.encoding, 'base64');
  t.equal(Buffer.from(o.content, 'base64').compare(BIN), 0);
  t.match(textOf(bin), /mime: application\/octet-stream\nbytes: 8/);
  const b64png = (await call('read_file', { path: 'img/dot.png', encoding: 'base64', offset: 1, limit: 3 }))
    .structuredContent as Record<string, any>;
  t.equal(b64png.content, PNG.subarray(1, 4).toString('base64'));
  const h = (await call('read_file', { path: 'bin/blob.dat', hash_only: true })).structuredContent as Record<
    string,
    any
  >;
  t.equal(h.kind, 'hash');
  t.notOk('content' in h);
  t.equal(h.content_hash, o.content_hash);
});

t.test('read_file refusals: not UTF-8, too large, folder, hidden, missing', async (t) => {
  t.equal(refusalOf(await call('read_file', { path: 'bin/blob.dat', encoding: 'text' }))!.code, 'not_utf8');
  const big = refusalOf(await call('read_file', { path: 'bin/big.dat' }))!;
  t.equal(big.code, 'too_large');
  t.equal(big.limit, 2 * 1024 * 1024);
  t.equal(refusalOf(await call('read_file', { path: 'docs' }))!.code, 'is_directory');
  t.equal(refusalOf(await call('read_file', { path: '.hidden/secret.txt' }))!.code, 'invalid_path');
  t.equal(refusalOf(await call('read_file', { path: 'nope.bin' }))!.code, 'not_found');
});

t.test('write_file: no-clobber create with parents, checked overwrite, markdown refused', async (t) => {
  const bytes = Buffer.from('hello attachment');
  const w = await call('write_file', { path: 'new/deeper/file.bin', content: bytes.toString('base64') });
  t.notOk(w.isError, textOf(w));
  const o = w.structuredContent as Record<string, any>;
  t.equal(o.created, true);
  t.equal(readFileSync(v('new/deeper/file.bin')).toString(), 'hello attachment');
  const again = refusalOf(await call('write_file', { path: 'new/deeper/file.bin', content: 'eA==' }))!;
  t.equal(again.code, 'already_exists');
  t.equal(readFileSync(v('new/deeper/file.bin')).toString(), 'hello attachment', 'left untouched');
  const stale = refusalOf(
    await call('write_file', {
      path: 'new/deeper/file.bin',
      content: 'eA==',
      overwrite: true,
      expected_hash: 'sha256:' + '0'.repeat(64),
    }),
  )!;
  t.equal(stale.code, 'stale_precondition');
  t.equal(stale.currentHash, o.content_hash);
  const ok = await call('write_file', {
    path: 'new/deeper/file.bin',
    content: 'second',
    encoding: 'text',
    overwrite: true,
    expected_hash: o.content_hash,
  });
  t.equal((ok.structuredContent as Record<string, any>).previous_hash, o.content_hash);
  t.equal(readFileSync(v('new/deeper/file.bin'), 'utf8'), 'second');
  t.equal(
    refusalOf(await call('write_file', { path: 'x.bin', content: 'eA==', expected_hash: o.content_hash }))!.code,
    'invalid_arguments',
  );
  t.equal(
    refusalOf(
      await call('write_file', { path: 'x.bin', content: 'eA==', overwrite: true, expected_hash: 'sha256:XYZ' }),
    )!.code,
    'malformed_precondition',
  );
  const md = refusalOf(await call('write_file', { path: 'notes/other.md', content: 'IyBoaQ==' }))!;
  t.equal(md.code, 'markdown_not_allowed');
  t.notOk(existsSync(v('notes/other.md')));
  t.equal(refusalOf(await call('write_file', { path: 'bad.bin', content: 'not base64!!' }))!.code, 'invalid_content');
  t.equal(refusalOf(await call('write_file', { path: '.hidden/x.bin', content: 'eA==' }))!.code, 'invalid_path');
  t.equal(refusalOf(await call('write_file', { path: 'ro.bin', content: 'eA==' }, readOnly))!.code, 'read_only');
  const created = await call('write_file', { path: 'made.bin', content: 'eA==', overwrite: true });
  t.equal((created.structuredContent as Record<string, any>).created, true, 'overwrite on a missing file creates it');
});

t.test('write_file: a maximum-size base64 write is refused by the tool, not by the transport', async (t) => {
  const over = Buffer.alloc(MAX_WRITE + 1, 7).toString('base64');
  const r = await call('write_file', { path: 'huge.bin', content: over });
  const refusal = refusalOf(r)!;
  t.equal(refusal.code, 'too_large');
  t.equal(refusal.limit, MAX_WRITE);
  t.equal(refusal.setting, 'files.maxWriteBytes');
  t.notOk(existsSync(v('huge.bin')));
  const exact = await call('write_file', { path: 'exact.bin', content: Buffer.alloc(MAX_WRITE, 7).toString('base64') });
  t.notOk(exact.isError, 'exactly the cap is accepted');
});

t.test('list_files: ls-style, dot entries hidden, globs, recursion, cap', async (t) => {
  const root = (await call('list_files', {})).structuredContent as Record<string, any>;
  const names = root.entries.map((e: { path: string }) => e.path);
  t.ok(names.includes('data') && names.includes('docs'));
  t.notOk(
    names.some((n: string) => n.startsWith('.')),
    'no dot entries',
  );
  const docs = (await call('list_files', { folder: 'docs', pattern: '*.pdf', recursive: true }))
    .structuredContent as Record<string, any>;
  t.same(
    docs.entries.map((e: { path: string }) => e.path),
    ['docs/a.pdf', 'docs/deep/b.pdf'],
  );
  t.equal(docs.entries[0].size, 13);
  t.match(docs.entries[0].mtime, /^\d{4}-\d\d-\d\dT/);
  const flat = (await call('list_files', { folder: 'docs', pattern: '*.pdf' })).structuredContent as Record<
    string,
    any
  >;
  t.same(
    flat.entries.map((e: { path: string }) => e.path),
    ['docs/a.pdf'],
  );
  const capped = (await call('list_files', { recursive: true, limit: 2 })).structuredContent as Record<string, any>;
  t.equal(capped.count, 2);
  t.equal(capped.truncated, true);
  const over = (await call('list_files', { recursive: true, limit: 5000 })).structuredContent as Record<string, any>;
  t.equal(over.limit, 50, 'limit is capped by files.maxListEntries');
  const text = textOf(await call('list_files', { folder: 'docs' }));
  t.match(text, /docs\/deep\//);
  t.match(text, /13 B\s+docs\/a\.pdf/);
  t.equal(refusalOf(await call('list_files', { folder: 'data/table.csv' }))!.code, 'not_a_directory');
});

t.test('delete_file: soft delete to .trash, permanent, guards', async (t) => {
  const trashed = await call('delete_file', { path: 'docs/a.pdf' });
  const o = trashed.structuredContent as Record<string, any>;
  t.match(o.trash_path, /^\.trash\/\d{8}-\d{6}-a\.pdf-[0-9a-f]{8}$/);
  t.notOk(existsSync(v('docs/a.pdf')));
  t.ok(existsSync(v(o.trash_path)));
  t.equal(refusalOf(await call('delete_file', { path: 'notes/note.md' }))!.code, 'markdown_not_allowed');
  t.equal(refusalOf(await call('delete_file', { path: 'docs' }))!.code, 'is_directory');
  mkdirSync(v('links'), { recursive: true });
  symlinkSync('../bin/blob.dat', v('links/alias.dat'));
  t.equal(refusalOf(await call('delete_file', { path: 'links/alias.dat' }))!.code, 'is_symlink');
  t.ok(existsSync(v('bin/blob.dat')), 'the target is untouched');
  const stale = refusalOf(
    await call('delete_file', { path: 'bin/blob.dat', expected_hash: 'sha256:' + 'a'.repeat(64) }),
  )!;
  t.equal(stale.code, 'stale_precondition');
  const h = (await call('read_file', { path: 'bin/blob.dat', hash_only: true })).structuredContent as Record<
    string,
    any
  >;
  const gone = await call('delete_file', { path: 'bin/blob.dat', permanent: true, expected_hash: h.content_hash });
  t.equal((gone.structuredContent as Record<string, any>).permanent, true);
  t.notOk(existsSync(v('bin/blob.dat')));
  t.notOk(
    readdirSync(v('.trash')).some((n) => n.includes('blob.dat')),
    'permanent delete does not go to .trash',
  );
  t.equal(refusalOf(await call('delete_file', { path: 'bin/blob.dat' }))!.code, 'not_found');
});

t.test(
  'the HTTP body limit follows the write cap: an over-cap base64 write is the tool refusing, not a 413',
  async (t) => {
    const big = await startTestServer({
      builtinDir: null,
      config: { plugins: [family], files: { maxWriteBytes: 5 * 1024 * 1024 } },
    });
    t.teardown(() => big.close());
    const c = await big.connect();
    // 5 MiB + 1 bytes → ~7 MB of base64: over the 4 MiB default body limit, under the derived one.
    const r = (await c.callTool({
      name: 'write_file',
      arguments: {
        path: 'big.bin',
        content: Buffer.alloc(5 * 1024 * 1024 + 1, 7).toString('base64'),
        encoding: 'base64',
      },
    })) as Result;
    t.equal(refusalOf(r)?.code, 'too_large');
    const ok = (await c.callTool({
      name: 'write_file',
      arguments: { path: 'max.bin', content: Buffer.alloc(5 * 1024 * 1024, 7).toString('base64'), encoding: 'base64' },
    })) as Result;
    t.notOk(ok.isError, 'a write exactly at the cap lands');
  },
);
