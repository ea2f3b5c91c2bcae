// A CRLF note stays CRLF through every edit: frontmatter edits, section replaces and appends bring LF text
// that is brought back to the note's style. LF and mixed notes are left as the edit made them.
import t from 'tap';
import { parseNote } from '../../../src/markdown/index.js';
import { keepLineEndings, lineEndingStyle } from '../../../plugins/notes/edits/line-endings.js';
import { editFrontmatter } from '../../../plugins/notes/edits/frontmatter.js';
import { appendContent, replaceSection } from '../../../plugins/notes/edits/sections.js';

const crlf = '---\r\ntitle: x\r\n---\r\n# A\r\none\r\n# B\r\ntwo\r\n';
const note = { path: 'c.md', text: crlf, model: parseNote(crlf, { path: 'c.md' }) };
const loneLf = (s: string): boolean => /(?<!\r)\n/.test(s);

t.test('lineEndingStyle', async (t) => {
  t.equal(lineEndingStyle(crlf), 'crlf');
  t.equal(lineEndingStyle('a\nb\n'), 'lf');
  t.equal(lineEndingStyle('a\r\nb\n'), 'mixed');
  t.equal(lineEndingStyle('a\rb'), 'mixed');
  t.equal(lineEndingStyle('one line'), 'none');
});

t.test('set_frontmatter, section replace and append keep CRLF', async (t) => {
  const fm = editFrontmatter(note, { status: 'done', list: ['a', 'b'] }, []);
  t.ok(loneLf(fm.text), 'the raw edit brings LF lines (the defect)');
  const kept = keepLineEndings(crlf, fm.text);
  t.notOk(loneLf(kept), 'no LF line survives');
  t.equal(lineEndingStyle(kept), 'crlf');
  t.ok(kept.endsWith('# A\r\none\r\n# B\r\ntwo\r\n'), 'the body is byte-identical');
  const sec = replaceSection(note, 'A', 'new\nlines\n').text;
  t.equal(keepLineEndings(crlf, sec), '---\r\ntitle: x\r\n---\r\n# A\r\nnew\r\nlines\r\n# B\r\ntwo\r\n');
  t.equal(keepLineEndings(crlf, appendContent(note, 'tail\nmore')), `${crlf}tail\r\nmore`);
});

t.test('LF, mixed and one-line notes are left as the edit made them', async (t) => {
  t.equal(keepLineEndings('a\nb\n', 'a\nb\nc\n'), 'a\nb\nc\n');
  t.equal(keepLineEndings('a\r\nb\n', 'a\r\nb\nc\n'), 'a\r\nb\nc\n');
  t.equal(keepLineEndings('one', 'one\ntwo'), 'one\ntwo');
});
