// resolveSection: `#N` ordinals, Parent/Child paths, exact text, ambiguity with candidates.
import t from 'tap';
import { parseNote, resolveSection } from '../../../src/markdown/index.js';

const model = parseNote(
  [
    '# Project',
    '## Notes',
    'a',
    '## Notes',
    'b',
    '### Detail',
    '# Archive',
    '## Notes',
    'c',
    '## #2',
    '# A/B',
    '',
  ].join('\n'),
  { path: 'p.md' },
);

t.test('a bare #N is always the ordinal', async (t) => {
  const r = resolveSection(model, '#2');
  t.ok(r.ok);
  if (r.ok) t.equal(r.heading.ordinal, 2);
  const out = resolveSection(model, '#99');
  t.same(out.ok ? null : [out.code, out.candidates.length], ['section_not_found', model.outline.length]);
  t.equal(resolveSection(model, '#0').ok, false);
});

t.test('ambiguous text is an error listing the candidates', async (t) => {
  const r = resolveSection(model, 'Notes');
  t.equal(r.ok, false);
  if (!r.ok) {
    t.equal(r.code, 'section_ambiguous');
    t.same(
      r.candidates.map((h) => h.ordinal),
      [2, 3, 6],
    );
    t.same(
      r.candidates.map((h) => h.path),
      ['Project/Notes', 'Project/Notes', 'Archive/Notes'],
    );
  }
});

t.test('Parent/Child paths disambiguate; parts may skip levels', async (t) => {
  const r = resolveSection(model, 'Archive/Notes');
  t.ok(r.ok && r.heading.ordinal === 6);
  const deep = resolveSection(model, 'Project/Detail');
  t.ok(deep.ok && deep.heading.ordinal === 4);
  const still = resolveSection(model, 'Project/Notes');
  t.equal(still.ok ? 'ok' : still.code, 'section_ambiguous');
  const literal = resolveSection(model, 'Archive/#2');
  t.ok(literal.ok && literal.heading.text === '#2', 'Parent/#2 reaches a heading titled "#2"');
  const slash = resolveSection(model, 'A/B');
  t.ok(slash.ok && slash.heading.ordinal === 8, 'a heading whose text has a slash is reachable by its text');
});

t.test('exact text, trimmed, case-sensitive; missing lists all headings', async (t) => {
  t.ok(resolveSection(model, '  Project ').ok);
  const r = resolveSection(model, 'project');
  t.same(r.ok ? null : r.code, 'section_not_found');
  const none = resolveSection(parseNote('no headings', { path: 'n.md' }), 'x');
  t.same(none.ok ? null : none.candidates, []);
});

t.test('duplicate siblings are flagged; section ranges follow depth', async (t) => {
  t.same(
    model.outline.map((h) => h.duplicateSibling),
    [false, true, true, false, false, false, false, false],
  );
  const [project, notes1] = model.outline;
  const archive = model.outline[4];
  t.equal(project.bodyEnd, archive.start);
  t.equal(notes1.bodyEnd, model.outline[2].start);
  t.equal(model.outline[2].bodyEnd, archive.start, 'a section includes its deeper subsections');
});
