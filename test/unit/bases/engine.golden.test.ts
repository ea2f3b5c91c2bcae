// The Bases engine against small vaults with the rows Obsidian shows (facts from Obsidian's Bases documentation,
// written as our own cases): filters, every function family, formulas, this, sort/group/limit, summaries, dates
// at a fixed clock (2026-01-15T12:00Z), nested tags, and refusals by name.
import t from 'tap';
import { isRefusal } from '../../../src/sdk/index.js';
import { formula, paths, vault, where } from './fixture.js';

const v = vault(
  [
    {
      path: 'Books/Dune.md',
      props: {
        rating: 5,
        status: 'done',
        finished: '2025-11-02',
        author: '[[Frank Herbert]]',
        genres: ['scifi', 'classic'],
        price: 9.5,
      },
      tags: ['book', 'book/scifi'],
      links: ['Frank Herbert', 'Reading list'],
    },
    {
      path: 'Books/Emma.md',
      props: { rating: 3, status: 'reading', finished: null, author: '[[Jane Austen]]', genres: ['classic'], price: 4 },
      tags: ['book'],
      links: ['Jane Austen'],
    },
    {
      path: 'Books/Old/Ulysses.md',
      props: { rating: 4, status: 'done', finished: '2024-03-10', genres: [], price: 12.25 },
      tags: ['book/classic'],
    },
    { path: 'Frank Herbert.md', props: { born: 1920 }, tags: ['person'] },
    { path: 'Jane Austen.md', props: { born: 1775 }, tags: ['person'], links: ['Books/Emma'] },
    { path: 'Reading list.md', props: { due: '2026-01-20' }, links: ['Dune', 'Emma'], embeds: ['cover.png'] },
    { path: 'cover.png', size: 2048 },
    {
      path: 'Projects/Plan.md',
      props: { owner: 'ana', done: false, 'start date': '2026-01-01T09:30:00' },
      tags: ['project'],
    },
    { path: 'Projects/Ship.md', props: { owner: 'bo', done: true }, tags: ['project'], links: ['Plan'] },
  ],
  { finished: 'date' },
);

const rows = (expr: string) => paths(v, where(expr));

t.test('filters: comparison, and/or/not, namespaces', async (t) => {
  t.same(await rows('rating >= 4'), ['Books/Dune.md', 'Books/Old/Ulysses.md'], 'bare property');
  t.same(await rows('note.rating > 4'), ['Books/Dune.md'], 'note. namespace');
  t.same(await rows('status != "done" && rating'), ['Books/Emma.md'], '&& and truthiness');
  t.same(await rows('owner == "ana" || owner == "bo"'), ['Projects/Plan.md', 'Projects/Ship.md'], '||');
  t.same(await rows('!done && owner'), ['Projects/Plan.md'], '!');
  t.same(
    await paths(
      v,
      'filters:\n  and:\n    - file.hasTag("book")\n    - not:\n        - status == "done"\nviews: [{type: table, name: T}]',
    ),
    ['Books/Emma.md'],
    'not holds when none of its items hold',
  );
  t.same(
    await paths(
      v,
      'filters:\n  or:\n    - owner == "bo"\n    - and: ["born > 1800", file.hasTag("person")]\nviews: [{type: table, name: T}]',
    ),
    ['Frank Herbert.md', 'Projects/Ship.md'],
    'nested and inside or',
  );
  t.same(
    await paths(v, 'filters: file.hasTag("book")\nviews:\n  - type: table\n    name: T\n    filters: rating < 5\n'),
    ['Books/Emma.md', 'Books/Old/Ulysses.md'],
    'view filters are ANDed with the global ones',
  );
  t.same(await rows('(2 + 3) * 2 == 10 && file.name == "Plan.md"'), ['Projects/Plan.md'], 'arithmetic precedence');
  t.same(await rows('note["start date"]'), ['Projects/Plan.md'], 'a property name with a space');
});

t.test('file properties and functions', async (t) => {
  t.same(await rows('file.ext == "png"'), ['cover.png'], 'a base starts from every file, attachments included');
  t.same(
    await rows('file.inFolder("Books")'),
    ['Books/Dune.md', 'Books/Emma.md', 'Books/Old/Ulysses.md'],
    'inFolder takes subfolders',
  );
  t.same(await rows('file.folder == "Books/Old"'), ['Books/Old/Ulysses.md'], 'file.folder');
  t.same(await rows('file.hasTag("book/scifi")'), ['Books/Dune.md'], 'a nested tag');
  t.same(
    await rows('file.hasTag("book")'),
    ['Books/Dune.md', 'Books/Emma.md', 'Books/Old/Ulysses.md'],
    'a parent tag matches its children',
  );
  t.same(await rows('file.hasTag("person", "project")').then((x) => x.length), 4, 'hasTag with several tags is any');
  t.same(await rows('file.hasLink("Frank Herbert")'), ['Books/Dune.md'], 'hasLink by name');
  t.same(await rows('file.hasLink(link("cover.png"))'), ['Reading list.md'], 'hasLink counts embeds');
  t.same(await rows('file.backlinks.length >= 2'), ['Books/Emma.md'], 'file.backlinks');
  t.same(await rows('file.links.contains(link("Plan"))'), ['Projects/Ship.md'], 'file.links contains a link');
  t.same(await rows('file.hasProperty("born")'), ['Frank Herbert.md', 'Jane Austen.md'], 'hasProperty');
  t.same(await rows('file.size > 1000'), ['cover.png'], 'file.size');
  t.same(await rows('file.basename == "Emma"'), ['Books/Emma.md'], 'file.basename');
  t.same(await rows('file.tags.contains("#person")').then((x) => x.length), 2, 'file.tags carry #');
  t.same(
    await rows('file.mtime > now() - "2 days" && file.name == "Plan.md"'),
    ['Projects/Plan.md'],
    'file.mtime is a date',
  );
  t.same(
    await rows('author.asFile().properties.born < 1800'),
    ['Books/Emma.md'],
    'a link property followed to its file',
  );
  t.same(await rows('author == link("Frank Herbert")'), ['Books/Dune.md'], 'links compare by the file they resolve to');
  t.same(await rows('this.file.name == file.name'), [], 'this without a this file matches nothing');
  t.same(
    await paths(v, where('file.hasLink(this.file)'), { this: 'Books/Emma.md' }),
    ['Jane Austen.md', 'Reading list.md'],
    'this',
  );
  t.same(
    await paths(v, where('file.folder == this.file.folder'), { this: 'Projects/Plan.md' }),
    ['Projects/Plan.md', 'Projects/Ship.md'],
    'this.file.folder',
  );
});

t.test('dates and durations at a fixed clock', async (t) => {
  t.same(
    await rows('finished > now() - "1 year"'),
    ['Books/Dune.md'],
    'typed date property against now() - a duration',
  );
  t.same(await rows('finished.year == 2024'), ['Books/Old/Ulysses.md'], 'date fields');
  t.same(await rows('due < today() + "1 week" && due > today()'), ['Reading list.md'], 'an untyped ISO date is a date');
  t.same(
    await formula(v, 'Reading list.md', '(date(due) - today()).days'),
    { type: 'number', value: 5 },
    'date - date is a duration',
  );
  t.same(
    await formula(v, 'Reading list.md', 'date("2026-01-31") + "1M"'),
    { type: 'date', value: '2026-02-28' },
    'calendar months clamp',
  );
  t.same(await formula(v, 'Reading list.md', 'today()'), { type: 'date', value: '2026-01-15' }, 'today()');
  t.same(await formula(v, 'Reading list.md', 'now()'), { type: 'date', value: '2026-01-15T12:00:00Z' }, 'now()');
  t.same(
    await formula(v, 'Projects/Plan.md', 'note["start date"].format("YYYY-MM-DD HH:mm")'),
    { type: 'string', value: '2026-01-01 09:30' },
    'format()',
  );
  t.same(
    await formula(v, 'Projects/Plan.md', 'note["start date"].date()'),
    { type: 'date', value: '2026-01-01' },
    'date()',
  );
  t.same(
    await formula(v, 'Reading list.md', 'date(due).relative()'),
    { type: 'string', value: 'in 4 days' },
    'relative()',
  );
  t.same(await formula(v, 'Reading list.md', 'duration("1d 2h").hours'), { type: 'number', value: 26 }, 'duration()');
});

t.test('string, number, list, object and regexp functions', async (t) => {
  const f = (p: string, e: string) => formula(v, p, e);
  t.same(await f('Projects/Plan.md', 'owner.upper() + "-" + owner.length'), { type: 'string', value: 'ANA-3' });
  t.same(await f('Projects/Plan.md', '"a,b,,c".split(",")'), { type: 'list', value: ['a', 'b', '', 'c'] });
  t.same(await f('Projects/Plan.md', '"hello world".title()'), { type: 'string', value: 'Hello World' });
  t.same(await f('Projects/Plan.md', '"a-b-c".replace("-", "+")'), { type: 'string', value: 'a+b+c' });
  t.same(await f('Projects/Plan.md', '"a1b22".replace(/[0-9]+/g, "#")'), { type: 'string', value: 'a#b#' });
  t.same(await f('Projects/Plan.md', '/^pl/i.matches(file.basename)'), { type: 'boolean', value: true });
  t.same(await f('Projects/Plan.md', '" x ".trim().repeat(3)'), { type: 'string', value: 'xxx' });
  t.same(await f('Projects/Plan.md', '"abcdef".slice(1, 3) + "abc".reverse()'), { type: 'string', value: 'bccba' });
  t.same(
    await f(
      'Projects/Plan.md',
      '"needle".containsAny("x", "ee") && "needle".startsWith("ne") && "needle".endsWith("le")',
    ),
    { type: 'boolean', value: true },
  );
  t.same(await f('Books/Dune.md', 'price.toFixed(2) + " dollars"'), { type: 'string', value: '9.50 dollars' });
  t.same(await f('Books/Old/Ulysses.md', '(price * 3).round(1)'), { type: 'number', value: 36.8 });
  t.same(await f('Books/Dune.md', '(-price).abs().floor() + (1.2).ceil()'), { type: 'number', value: 11 });
  t.same(await f('Books/Dune.md', 'genres.map(value.upper()).join("/")'), { type: 'string', value: 'SCIFI/CLASSIC' });
  t.same(await f('Books/Dune.md', '[1, 2, 3, 4].filter(value % 2 == 0)'), { type: 'list', value: [2, 4] });
  t.same(await f('Books/Dune.md', '[1, 2, 3, 4].reduce(acc + value, 10)'), { type: 'number', value: 20 });
  t.same(await f('Books/Dune.md', '[3, 1, 2, 1].unique().sort()'), { type: 'list', value: [1, 2, 3] });
  t.same(await f('Books/Dune.md', '[[1], [2, 3]].flat().reverse().slice(0, 2)'), { type: 'list', value: [3, 2] });
  t.same(await f('Books/Dune.md', 'genres.containsAll("scifi", "classic") && !genres.contains("horror")'), {
    type: 'boolean',
    value: true,
  });
  t.same(await f('Books/Dune.md', 'genres[0] + genres.length'), { type: 'string', value: 'scifi2' });
  t.same(await f('Books/Dune.md', 'file.properties.keys().length'), { type: 'number', value: 6 });
  t.same(await f('Books/Dune.md', '{"a": 1}.isEmpty() || {}.isEmpty()'), { type: 'boolean', value: true });
  t.same(await f('Books/Dune.md', 'if(rating > 4, "great", "ok")'), { type: 'string', value: 'great' });
  t.same(await f('Books/Emma.md', 'if(rating > 4, "great")'), { type: 'null', value: null });
  t.same(await f('Books/Dune.md', 'max(1, 7, 3) + min(4, 2) + number("5")'), { type: 'number', value: 14 });
  t.same(await f('Books/Dune.md', 'rating.isType("number") && status.isType("string") && genres.isType("list")'), {
    type: 'boolean',
    value: true,
  });
  t.same(await f('Books/Dune.md', 'author'), {
    type: 'link',
    value: { target: 'Frank Herbert', path: 'Frank Herbert.md', display: null },
  });
  t.same(await f('Books/Dune.md', 'list(rating)'), { type: 'list', value: [5] });
  t.same(await f('Books/Dune.md', 'missing.isEmpty() && finished.isTruthy()'), { type: 'boolean', value: true });
});

t.test('formulas reference formulas; a runtime type error is a cell error; cycles are refused', async (t) => {
  const r = await v.query(
    'filters: file.hasTag("book")\nformulas:\n  ppu: price / rating\n  label: "formula.ppu.toFixed(1) + \\" per star\\""\n  bad: status.round()\nviews:\n  - type: table\n    name: T\n    order: [file.name, formula.label, formula.bad]\n    sort: [{property: formula.ppu, direction: DESC}]\n',
  );
  t.same(
    r.rows.map((x) => x.path),
    ['Books/Old/Ulysses.md', 'Books/Dune.md', 'Books/Emma.md'],
    'sorted by a formula, descending',
  );
  t.same(r.rows[0].cells['formula.label'], { type: 'string', value: '3.1 per star' });
  t.equal(r.rows[0].cells['formula.bad'].type, 'error', 'a method on the wrong type is an error in its cell');
  await t.rejects(
    v.query(
      'formulas:\n  a: formula.b + 1\n  b: formula.c\n  c: formula.a\nviews: [{type: table, name: T, order: [formula.a]}]',
    ),
    { code: 'bases_formula_cycle', message: /formula\.a → formula\.b → formula\.c → formula\.a/ },
  );
  await t.rejects(v.query('views: [{type: table, name: T, order: [formula.nope]}]'), { code: 'bases_invalid' });
});

t.test('sort with several keys, groupBy, limit, properties display names', async (t) => {
  const r = await v.query(
    'filters: file.hasTag("book")\nproperties:\n  note.rating: {displayName: Stars}\nviews:\n  - type: table\n    name: Books\n    groupBy: {property: status, direction: DESC}\n    order: [file.name, rating]\n    sort:\n      - {property: rating, direction: ASC}\n',
  );
  t.same(
    r.rows.map((x) => x.path),
    ['Books/Emma.md', 'Books/Old/Ulysses.md', 'Books/Dune.md'],
    'groups DESC, then rating ASC',
  );
  t.same(r.groups, [
    { key: { type: 'string', value: 'reading' }, count: 1 },
    { key: { type: 'string', value: 'done' }, count: 2 },
  ]);
  const cv = (await import('../../../plugins/bases/engine.js')).compileView(
    (await import('../../../plugins/bases/base-file.js')).parseBase(
      'properties:\n  rating: {displayName: Stars}\nviews: [{type: table, name: T, order: [file.name, rating]}]',
      1e6,
    ),
    undefined,
    (await import('./fixture.js')).LIMITS,
  );
  t.same(
    cv.columns,
    [
      { id: 'file.name', name: 'file.name' },
      { id: 'rating', name: 'Stars' },
    ],
    'display names',
  );
  const lim = await v.query(
    'filters: rating\nviews:\n  - {type: table, name: T, limit: 2, sort: [{property: rating, direction: DESC}], summaries: {rating: Sum}}',
  );
  t.same(
    lim.rows.map((x) => x.path),
    ['Books/Dune.md', 'Books/Old/Ulysses.md'],
    'limit',
  );
  t.equal(lim.total, 2);
  t.same(
    lim.summaries,
    [{ column: 'rating', summary: 'Sum', value: { type: 'number', value: 9 } }],
    'summaries cover the limited rows',
  );
  t.same(
    await paths(v, 'views:\n  - {type: table, name: A, filters: owner}\n  - {type: cards, name: B, filters: born}', {
      view: 'B',
    }),
    ['Frank Herbert.md', 'Jane Austen.md'],
    'a view by name',
  );
});

t.test('a grouped view with summaries: each group carries its own, the view its whole', async (t) => {
  const yaml =
    'filters: file.hasTag("book")\nviews:\n  - type: table\n    name: T\n    groupBy: {property: status, direction: DESC}\n    summaries: {rating: Sum, price: Average, finished: Latest}\n';
  const r = await v.query(yaml);
  const num = (value: number) => ({ type: 'number', value });
  t.same(
    r.groups.map((g) => [
      g.key.value,
      g.count,
      Object.fromEntries((g.summaries ?? []).map((s) => [s.column, s.value])),
    ]),
    [
      ['reading', 1, { rating: num(3), price: num(4), finished: { type: 'null', value: null } }],
      ['done', 2, { rating: num(9), price: num((9.5 + 12.25) / 2), finished: { type: 'date', value: '2025-11-02' } }],
    ],
    'per-group Sum, Average and Latest over each group rows',
  );
  t.same(
    Object.fromEntries(r.summaries.map((s) => [s.column, s.value])).rating,
    num(12),
    'the view summary covers every group',
  );
  const first = await v.query(yaml, { offset: 0, pageSize: 1 });
  t.same(
    first.groups.map((g) => g.summaries !== undefined),
    [true, false],
    'a page carries the summaries of the groups it shows rows of',
  );
  const second = await v.query(yaml, { offset: 2, pageSize: 1 });
  t.same(
    second.groups.map((g) => g.summaries !== undefined),
    [false, true],
    'the last page: only the done group',
  );
});

t.test('summaries', async (t) => {
  const r = await v.query(
    'filters: file.hasTag("book")\nsummaries:\n  spread: values.max() - values.min()\nviews:\n  - type: table\n    name: T\n    summaries:\n      rating: Average\n      price: Median\n      finished: Earliest\n      note.genres: Filled\n      status: Unique\n      formula.x: spread\nformulas:\n  x: rating * 2\n',
  );
  const got = Object.fromEntries(r.summaries.map((s) => [s.column, s.value]));
  t.same(got.rating, { type: 'number', value: 4 }, 'Average');
  t.same(got.price, { type: 'number', value: 9.5 }, 'Median');
  t.same(got.finished, { type: 'date', value: '2024-03-10' }, 'Earliest');
  t.same(got['note.genres'], { type: 'number', value: 2 }, 'Filled (an empty list is empty)');
  t.same(got.status, { type: 'number', value: 2 }, 'Unique');
  t.same(got['formula.x'], { type: 'number', value: 4 }, 'a custom summary formula over values');
  const more = await v.query(
    'filters: file.inFolder("Projects") || file.hasTag("book")\nviews:\n  - type: table\n    name: T\n    summaries: {done: Checked, rating: Stddev, price: Range, finished: Latest, owner: Empty, file.name: Count}\n',
  );
  const m = Object.fromEntries(more.summaries.map((s) => [s.column, s.value]));
  t.same(m.done, { type: 'number', value: 1 });
  t.equal((m.rating.value as number).toFixed(3), '0.816');
  t.same(m.price, { type: 'number', value: 8.25 });
  t.same(m.finished, { type: 'date', value: '2025-11-02' });
  t.same(m.owner, { type: 'number', value: 3 });
  t.same(m['file.name'], { type: 'number', value: 5 });
});

t.test('what is not supported is refused by name', async (t) => {
  const refused = async (yaml: string, code: string, re: RegExp) => {
    try {
      await v.query(yaml);
      t.fail(`${yaml} was answered`);
    } catch (e) {
      t.ok(isRefusal(e), 'a typed refusal');
      t.equal((e as { code: string }).code, code);
      t.match((e as Error).message, re);
    }
  };
  await refused(where('file.geoDistance(1)'), 'bases_unsupported', /the method \.geoDistance\(\)/);
  await refused(where('dataviewQuery("x")'), 'bases_unsupported', /the function dataviewQuery\(\)/);
  await refused('views: [{type: map, name: M}]', 'bases_unsupported', /the view type "map"/);
  await refused(
    'views: [{type: table, name: T, summaries: {rating: Mode}}]',
    'bases_unsupported',
    /the summary "Mode"/,
  );
  await refused(where('/(a+)+$/.matches(file.name)'), 'bases_unsupported', /backtrack/);
  await refused(where('/(a)\\1/.matches(file.name)'), 'bases_unsupported', /backreferences/);
  await refused('views: [{type: table, name: T}]\nfilters: {and: [x], or: [y]}', 'bases_invalid', /exactly one key/);
  await t.rejects(v.query('views: [{type: table, name: A}]', { view: 'B' }), { code: 'bases_no_view' });
  await refused('views: [ {type: table', 'bases_invalid', /YAML/);
});

t.test('names that are prototype keys are only ever their own entries', async (t) => {
  const r = await v.query(
    'filters: file.name == "Dune.md"\nformulas:\n  __proto__: "1"\n  constructor: "2"\nviews:\n  - {type: table, name: T, order: [constructor, formula.constructor, formula.__proto__, toString]}\n',
  );
  t.same(r.rows[0].cells.constructor, { type: 'null', value: null }, 'a missing property named constructor is null');
  t.same(r.rows[0].cells['formula.constructor'], { type: 'number', value: 2 });
  t.same(r.rows[0].cells['formula.__proto__'], { type: 'number', value: 1 });
  const o = await formula(v, 'Books/Dune.md', '{"__proto__": {"x": 1}}.keys()');
  t.same(o, { type: 'list', value: ['__proto__'] }, 'an object literal key __proto__ is a key');
  t.equal(({} as { x?: unknown }).x, undefined, 'no prototype was touched');
});

t.test(
  'which views can be answered from the notes alone (the loader then skips the walk for attachments)',
  async (t) => {
    const { compileView } = await import('../../../plugins/bases/engine.js');
    const { parseBase } = await import('../../../plugins/bases/base-file.js');
    const { LIMITS } = await import('./fixture.js');
    const notesOnly = (yaml: string) => compileView(parseBase(yaml, 1e6), undefined, LIMITS).notesOnly;
    const view = (f: string) => `filters: ${JSON.stringify(f)}\nviews: [{type: table, name: T}]`;
    t.ok(notesOnly(view('file.ext == "md"')));
    t.ok(notesOnly(view('rating >= 4 && status == "done"')));
    t.ok(notesOnly(view('file.hasTag("x") || note.owner')));
    t.ok(notesOnly('filters:\n  and: ["!file.inFolder(\\"t\\")", file.ext == "md"]\nviews: [{type: table, name: T}]'));
    t.notOk(notesOnly(view('!rating')), 'a negation can hold for an attachment');
    t.notOk(notesOnly(view('file.inFolder("x")')));
    t.notOk(notesOnly(view('rating != 3')), '!= holds for null');
    t.notOk(notesOnly(view('rating > 3 || file.size > 1')), 'an or with one branch open to attachments');
    t.notOk(notesOnly(view('rating > 3 && file.hasLink(link("x"))')), 'link resolution needs every file');
    t.notOk(notesOnly('views: [{type: table, name: T}]'), 'no filter');
    t.notOk(notesOnly('filters:\n  not: [file.ext == "md"]\nviews: [{type: table, name: T}]'));
  },
);
