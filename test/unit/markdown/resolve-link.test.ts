// resolveLink: vault path, relative path, path suffix, file name (case-insensitive), attachments, and
// ambiguity reported with every candidate instead of a tie-break. Aliases never resolve.
import t from 'tap';
import { buildLinkIndex, resolveLink } from '../../../src/markdown/index.js';

const index = buildLinkIndex([
  'Home.md',
  'notes/Ideas.md',
  'archive/Ideas.md',
  'archive/old/Ideas.md',
  'projects/x/Plan.md',
  'projects/y/Plan.md',
  'img/diagram.png',
  'v1.2.md',
  'HOMEPAGE.md',
  'Homepage.md',
]);

t.test('exact paths, with or without .md, from the root or the source folder', async (t) => {
  t.same(resolveLink('notes/Ideas', 'Home.md', index), {
    resolved: 'notes/Ideas.md',
    ambiguous: false,
    candidates: ['notes/Ideas.md'],
    via: 'path',
  });
  t.equal(resolveLink('NOTES/ideas', 'Home.md', index).resolved, 'notes/Ideas.md', 'paths match case-insensitively');
  t.equal(resolveLink('notes/Ideas.md', 'Home.md', index).resolved, 'notes/Ideas.md');
  t.equal(resolveLink('x/Plan', 'projects/z.md', index).resolved, 'projects/x/Plan.md');
  t.equal(resolveLink('../y/Plan', 'projects/x/Plan.md', index).resolved, 'projects/y/Plan.md');
  t.equal(resolveLink('/Home', 'notes/Ideas.md', index).resolved, 'Home.md');
});

t.test('basename matching is case-insensitive; attachments match by full name', async (t) => {
  t.equal(resolveLink('home', 'notes/Ideas.md', index).resolved, 'Home.md');
  t.equal(resolveLink('diagram.png', 'Home.md', index).resolved, 'img/diagram.png');
  t.equal(resolveLink('v1.2', 'Home.md', index).resolved, 'v1.2.md');
});

t.test('several matching names are ambiguous: no file is chosen, every candidate is listed', async (t) => {
  t.same(resolveLink('Ideas', 'archive/Other.md', index), {
    resolved: null,
    ambiguous: true,
    candidates: ['archive/Ideas.md', 'notes/Ideas.md', 'archive/old/Ideas.md'],
    via: 'name',
  });
  t.same(resolveLink('Ideas', 'Home.md', index).candidates, [
    'archive/Ideas.md',
    'notes/Ideas.md',
    'archive/old/Ideas.md',
  ]);
  t.same(
    resolveLink('Homepage', 'x/y.md', index),
    { resolved: null, ambiguous: true, candidates: ['HOMEPAGE.md', 'Homepage.md'], via: 'name' },
    'case-insensitive: a same-case name does not win',
  );
  t.same(resolveLink('Plan', 'Home.md', index).candidates, ['projects/x/Plan.md', 'projects/y/Plan.md']);
});

t.test('a folder-qualified target must match the end of the path, with no fallback to the bare name', async (t) => {
  t.equal(resolveLink('old/Ideas', 'Home.md', index).resolved, 'archive/old/Ideas.md');
  t.equal(resolveLink('nowhere/Ideas', 'Home.md', index).resolved, null);
  t.equal(resolveLink('img/other/diagram.png', 'Home.md', index).resolved, null);
  t.equal(resolveLink('../x/Plan', 'Home.md', index).resolved, null, 'a relative path is never matched as a suffix');
});

t.test('aliases never resolve; dangling links keep nothing', async (t) => {
  t.same(resolveLink('Missing', 'Home.md', index), { resolved: null, ambiguous: false, candidates: [] });
  t.equal(resolveLink('../../escape', 'Home.md', index).resolved, null);
  t.equal(resolveLink('', 'notes/Ideas.md', index).resolved, 'notes/Ideas.md', 'an empty target is the note itself');
});
