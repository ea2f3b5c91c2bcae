// The pieces a huge note's model crosses threads in: a caller's view (its fields and every list's length),
// the packed model whose long lists travel as JSON slices and come back whole, and JSON pieces for
// fingerprints and row batches. Each must equal what the whole model gives.
import t from 'tap';
import { countsOf, distinctTags, packModel, parseNote, unpackModel, viewOfModel } from '../../../src/markdown/index.js';
import { jsonPieces, rowSlices } from '../../../src/sdk/index.js';

const text = `---\ntags: [a, B]\naliases: [x]\n---\n# Head\n${Array.from(
  { length: 5_000 },
  (_, i) => `- [ ] task ${i} [[L${i % 7}]] #t${i % 3} #A`,
).join('\n')}\n## Two\nend ^blk\n`;
const model = parseNote(text, { path: 'N.md' });

t.test('a view holds the fields asked for and the length of every list', async (t) => {
  const view = viewOfModel(model, { fields: ['outline', 'title'] });
  t.same(Object.keys(view).sort(), ['counts', 'outline', 'path', 'title']);
  t.same(view.outline, model.outline);
  t.same(view.counts, {
    tags: model.tags.length,
    outline: 2,
    links: 5_000,
    blockIds: model.blockIds.length,
    tasks: 5_000,
    chunks: model.chunks.length,
  });
  t.same(countsOf(model), view.counts);
});

t.test('distinct tags keep the first of each (identity, source) pair, in order', async (t) => {
  const tags = distinctTags(model.tags);
  const pairs = (list: typeof tags) => [...new Set(list.map((x) => `${x.source}:${x.tag}`))];
  t.same(pairs(tags), pairs(model.tags));
  t.equal(tags.length, pairs(model.tags).length, 'one entry per pair');
  t.ok(model.tags.length > 10_000, 'the note repeats its tags');
  const firstDisplay = (list: typeof tags) => {
    const seen = new Map<string, string>();
    for (const x of list) if (!seen.has(x.tag)) seen.set(x.tag, x.display);
    return [...seen];
  };
  t.same(firstDisplay(tags), firstDisplay(model.tags), 'a tag list reads the same');
  const view = viewOfModel(model, { fields: ['tags'], distinctTags: true });
  t.same(view.tags, tags);
  t.equal(view.counts.tags, model.tags.length, 'the count is of every occurrence');
});

t.test('a packed model carries long lists as JSON slices and unpacks to the same model', async (t) => {
  const packed = structuredClone(packModel(model, 1_000));
  t.equal(packed.model.tasks.length, 0, 'no task object crosses');
  t.equal(packed.packed.tasks?.length, 5, '5,000 tasks in 5 slices');
  t.equal(packed.packed.outline, undefined, 'short lists travel as they are');
  let pauses = 0;
  const back = await unpackModel(packed, async () => pauses++);
  t.same(back, JSON.parse(JSON.stringify(model)));
  t.ok(pauses >= 10, `the event loop may turn between slices (${pauses} pauses)`);
});

t.test('JSON pieces hash like the whole, and row slices cover the list once', async (t) => {
  const list = Array.from({ length: 2_500 }, (_, i) => ({ i }));
  const pieces = [...jsonPieces(['head'], list, 1_000)];
  t.equal(pieces.length, 4);
  t.same(
    pieces.slice(1).flatMap((p) => JSON.parse(p)),
    list,
  );
  t.same([...jsonPieces(['head'], list, 1_000)], pieces, 'deterministic');
  t.not([...jsonPieces(['head'], [...list, { i: 0 }], 1_000)].join(''), pieces.join(''), 'a change shows');
  const slices = [...rowSlices(list, (x) => x.i * 2, 1_000)];
  t.same(
    slices.map((s) => s.length),
    [1_000, 1_000, 500],
  );
  t.same(
    slices.flat(),
    list.map((x) => x.i * 2),
  );
});
