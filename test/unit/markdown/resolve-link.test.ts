// resolveLink: exact path, basename (case-insensitive), alias, attachments, ambiguity and the tie-break.
import t from 'tap';
import { buildLinkIndex, resolveLink } from '../../../src/markdown/index.js';

const index = buildLinkIndex(
  [
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
  ],
  new Map([
    ['Home.md', ['Start', 'Landing']],
    ['notes/Ideas.md', ['Shared']],
    ['archive/Ideas.md', ['Shared']],
  ]),
);

t.test('exact paths, with or without .md, from the root or the source folder', async (t) => {
  t.same(resolveLink('notes/Ideas', 'Home.md', index), { resolved: 'notes/Ideas.md', ambiguous: false, candidates: ['notes/Ideas.md'] });
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

t.test('ambiguous basenames: same folder, then fewest segments, then alphabetical', async (t) => {
  const fromArchive = resolveLink('Ideas', 'archive/Other.md', index);
  t.same(fromArchive, { resolved: 'archive/Ideas.md', ambiguous: true, candidates: ['archive/Ideas.md', 'notes/Ideas.md', 'archive/old/Ideas.md'] });
  const fromRoot = resolveLink('Ideas', 'Home.md', index);
  t.equal(fromRoot.resolved, 'archive/Ideas.md', 'fewest segments, then alphabetical');
  t.ok(fromRoot.ambiguous);
  const caseOnly = resolveLink('homepage', 'x/y.md', index);
  t.same(caseOnly.candidates, ['HOMEPAGE.md', 'Homepage.md']);
  t.equal(resolveLink('HOMEPAGE', 'x/y.md', index).resolved, 'HOMEPAGE.md');
  t.equal(resolveLink('Homepage', 'x/y.md', index).resolved, 'Homepage.md', 'a same-case name wins the tie-break');
});

t.test('a folder-qualified target must match the end of the path', async (t) => {
  t.equal(resolveLink('old/Ideas', 'Home.md', index).resolved, 'archive/old/Ideas.md');
  t.equal(resolveLink('nowhere/Ideas', 'Home.md', index).resolved, null);
});

t.test('aliases resolve when unambiguous; dangling links keep nothing', async (t) => {
  t.equal(resolveLink('landing', 'notes/Ideas.md', index).resolved, 'Home.md');
  t.same(resolveLink('Shared', 'Home.md', index), { resolved: null, ambiguous: true, candidates: ['archive/Ideas.md', 'notes/Ideas.md'] });
  t.same(resolveLink('Missing', 'Home.md', index), { resolved: null, ambiguous: false, candidates: [] });
  t.equal(resolveLink('../../escape', 'Home.md', index).resolved, null);
  t.equal(resolveLink('', 'notes/Ideas.md', index).resolved, 'notes/Ideas.md', 'an empty target is the note itself');
});
