import t from 'tap';
import { Refusal, renderRefusal, parseRefusalLine, REFUSALS } from '../../../src/sdk/refusals.js';

t.test('a refusal renders its sentence and ends with the single-line contract', async (t) => {
  const r = new Refusal('stale_precondition', { path: 'a.md', expectedHash: 'sha256:aa', currentHash: 'sha256:bb' });
  const text = renderRefusal(r);
  const lines = text.split('\n');
  t.equal(lines.length, 2);
  t.match(lines[0], /a\.md.*sha256:aa.*sha256:bb/);
  t.same(parseRefusalLine(text), {
    code: 'stale_precondition',
    retryable: false,
    path: 'a.md',
    expectedHash: 'sha256:aa',
    currentHash: 'sha256:bb',
    current_hash: 'sha256:bb',
    nothing_written: true,
  });
});

t.test('details with newlines stay on one line', async (t) => {
  const r = new Refusal('invalid_path', { path: 'a\nb\u2028c', reason: 'x' });
  const last = renderRefusal(r).split('\n').pop()!;
  t.ok(last.startsWith('MCP-REFUSAL {'));
  t.equal(parseRefusalLine(renderRefusal(r))?.path, 'a\nb\u2028c');
});

t.test('every catalog entry has a sentence and a retry flag', async (t) => {
  for (const [code, spec] of Object.entries(REFUSALS)) {
    t.ok(spec.sentence.length > 10, code);
    t.type(spec.retryable, 'boolean', code);
  }
});

t.test("families' own codes: typed, rendered like shared ones, and refused when they collide", async (t) => {
  const { familyRefusals, registerFamilyRefusals, refusalOwner, isRefusal, renderRefusal } = await import(
    '../../../src/sdk/refusals.js'
  );
  const own = familyRefusals({
    shelf_full: { sentence: 'The shelf holds {limit} books.', retryable: false, details: ['limit'] },
  });
  registerFamilyRefusals('library', own.specs);
  const r = own.refusal('shelf_full', { limit: 3 });
  t.equal(r.code, 'shelf_full');
  t.equal(renderRefusal(r), 'The shelf holds 3 books.\nMCP-REFUSAL {"code":"shelf_full","retryable":false,"limit":3}');
  t.ok(
    isRefusal({ name: 'Refusal', code: 'shelf_full', message: 'x' }),
    'a registered code is a refusal even from another copy of the SDK',
  );
  t.equal(refusalOwner('shelf_full'), 'library');
  t.throws(() => registerFamilyRefusals('other', { shelf_full: own.specs.shelf_full }), /already owns/);
  t.throws(() => registerFamilyRefusals('other', { busy: own.specs.shelf_full }), /the host's own/);
  t.throws(() => registerFamilyRefusals('other', { 'Bad-Code': own.specs.shelf_full }), /not lowercase/);
  t.throws(() => own.refuse('shelf_full', { limit: 1 }), /holds 1 books/);
});
