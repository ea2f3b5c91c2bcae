// Bad input: parseNote survives every hostile note the vault can hold, and says what it survived.
import t from 'tap';
import { parseNote } from '../../../src/markdown/index.js';

const opts = { path: 'bad.md' };

t.test('empty file', async (t) => {
  const m = parseNote('', opts);
  t.same(m.outline, []);
  t.same(m.links, []);
  t.same(m.chunks, []);
  t.equal(m.frontmatter.present, false);
  t.same(m.body, { start: 0, end: 0 });
  t.same(m.problems, []);
  t.same(parseNote(new Uint8Array(0), opts).problems, []);
});

t.test('invalid UTF-8 and binary bytes decode with replacement and a problem', async (t) => {
  const bytes = new Uint8Array([
    0x23, 0x20, 0x48, 0x0a, 0xff, 0xfe, 0x00, 0xc3, 0x28, 0x5b, 0x5b, 0x78, 0x5d, 0x5d, 0x0a,
  ]);
  const m = parseNote(bytes, opts);
  t.match(m.problems[0], /^invalid_utf8/);
  t.equal(m.outline.length, 1);
  t.equal(m.links[0]?.target, 'x');
  const binary = new Uint8Array(64 * 1024).map((_, i) => (i * 7919 + 13) % 256);
  t.doesNotThrow(() => parseNote(binary, opts));
});

t.test('a 10 MB note parses (line scanner past the micromark limit) in bounded time', async (t) => {
  const para = 'Some words [[Link]] and #tag with `code` here.\n\n';
  const text = `# Big\n${para.repeat(Math.ceil(10_000_000 / para.length))}`;
  const t0 = performance.now();
  const m = parseNote(text, opts);
  t.ok(performance.now() - t0 < 20_000, 'under 20 s');
  t.equal(m.outline.length, 1);
  t.ok(m.links.length > 100_000);
  t.match(m.problems.join(' '), /large_note/);
  t.equal(m.body.end, Buffer.byteLength(text));
});

t.test('100,000 headings', async (t) => {
  const text = Array.from({ length: 100_000 }, (_, i) => `${'#'.repeat((i % 6) + 1)} H${i}\n`).join('');
  const m = parseNote(text, opts);
  t.equal(m.outline.length, 100_000);
  t.equal(m.outline[99_999].ordinal, 100_000);
  t.equal(m.outline[1].path, 'H0/H1');
});

t.test('10,000-deep nested lists and blockquotes fall back to the line scanner', async (t) => {
  const list = Array.from({ length: 10_000 }, (_, i) => `${' '.repeat(i * 2)}- item [[L${i}]]`).join('\n');
  const ml = parseNote(list, opts);
  t.match(ml.problems.join(' '), /deep_nesting/);
  t.equal(ml.links.length, 10_000);
  const quotes = `${'>'.repeat(10_000)} deep [[Q]]\n# After\n`;
  const mq = parseNote(quotes, opts);
  t.match(mq.problems.join(' '), /deep_nesting/);
  t.equal(mq.links.length, 1);
  t.equal(mq.outline.length, 1);
  const oneLine = `${'- '.repeat(10_000)}x`;
  t.doesNotThrow(() => parseNote(oneLine, opts));
  const emphasis = `${'*'.repeat(10_000)}x${'*'.repeat(10_000)}`;
  t.match(parseNote(emphasis, opts).problems.join(' '), /delimiter_run/);
  const brackets = `${'['.repeat(5_000)}x${']'.repeat(5_000)}`;
  t.doesNotThrow(() => parseNote(brackets, opts));
});

t.test('a line of nested ordered list markers falls back too (micromark is super-linear in them)', async (t) => {
  for (const marker of ['1. ', '2) ', '123456789. ']) {
    const m = parseNote(`${marker.repeat(20_000)}[[L]]\n\n<b>html</b> \`code\`\n`, opts);
    t.match(m.problems.join(' '), /deep_nesting/, marker);
    t.equal(m.links.length, 1, marker);
  }
  // Not markers (no white space after the delimiter, or ten digits): as many on one line are a plain paragraph.
  for (const word of ['1.', '2)', '1234567890. ']) {
    const m = parseNote(`${word.repeat(4_000)}\n\n<b>html</b>\n`, opts);
    t.same(m.problems, [], word);
  }
});

t.test('one huge paragraph of unclosed link syntax (quadratic for micromark) goes to the line scanner', async (t) => {
  const t0 = performance.now();
  const m = parseNote(`${'[a](b '.repeat(40_000)}\n\`x\``, opts);
  t.ok(performance.now() - t0 < 5_000, 'bounded time');
  t.match(m.problems.join(' '), /large_block/);
});

t.test('YAML alias bomb is refused with alias_limit, body still parsed', async (t) => {
  const bomb = [
    '---',
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
    'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
    'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
    'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
    'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
    'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
    'g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]',
    '---',
    '# Body [[Link]]',
  ].join('\n');
  const m = parseNote(bomb, opts);
  t.equal(m.frontmatter.error?.code, 'alias_limit');
  t.equal(m.frontmatter.data, null);
  t.equal(m.frontmatter.present, true);
  t.equal(m.outline[0]?.text, 'Body [[Link]]');
  t.equal(m.links.length, 1);
});

t.test('frontmatter defects are typed and never lose the body', async (t) => {
  const unclosed = parseNote('---\ntitle: x\n# H\n[[L]]\n', opts);
  t.equal(unclosed.frontmatter.error?.code, 'unclosed_fence');
  t.equal(unclosed.frontmatter.present, false);
  t.equal(unclosed.frontmatter.bodyStart, 0);
  t.equal(unclosed.outline.length, 1);
  t.equal(unclosed.links.length, 1);
  const malformed = parseNote('---\na: [x\n---\nbody #t\n', opts);
  t.equal(malformed.frontmatter.error?.code, 'malformed_yaml');
  t.equal(malformed.frontmatter.bodyStart, 14);
  t.equal(malformed.tags[0]?.tag, 't');
  const list = parseNote('---\n- a\n- b\n---\nbody\n', opts);
  t.equal(list.frontmatter.error?.code, 'not_a_mapping');
  const scalar = parseNote('---\njust text\n---\n', opts);
  t.equal(scalar.frontmatter.error?.code, 'not_a_mapping');
  const empty = parseNote('---\n---\nbody', opts);
  t.same(empty.frontmatter.data, {});
  t.equal(empty.frontmatter.bodyStart, 8);
  const notOnLineOne = parseNote('\n---\na: 1\n---\n', opts);
  t.equal(notOnLineOne.frontmatter.present, false);
});

t.test('a YAML key __proto__ stays data', async (t) => {
  const m = parseNote('---\n__proto__:\n  polluted: true\ntitle: x\n---\n', opts);
  const data = m.frontmatter.data as Record<string, unknown>;
  t.equal(Object.getPrototypeOf(data), Object.prototype);
  t.equal((data as { polluted?: unknown }).polluted, undefined);
  t.same(Object.keys(data), ['__proto__', 'title']);
  t.equal(({} as { polluted?: unknown }).polluted, undefined);
});

t.test('CRLF, lone CR, mixed line endings and a BOM keep byte offsets and lines', async (t) => {
  const text = '\ufeff# A\r\n[[x]]\r## B\n[[y]]\r\n';
  const bytes = Buffer.from(text);
  const m = parseNote(text, opts);
  t.same(
    m.outline.map((h) => [h.text, h.line]),
    [
      ['A', 1],
      ['B', 3],
    ],
  );
  t.same(
    m.links.map((l) => [l.raw, l.line]),
    [
      ['[[x]]', 2],
      ['[[y]]', 4],
    ],
  );
  for (const l of m.links) t.equal(bytes.subarray(l.start, l.end).toString(), l.raw);
  t.equal(m.outline[0].start, 3, 'heading starts after the 3-byte BOM');
  t.equal(m.body.start, 3);
  const fm = parseNote('\ufeff---\r\na: 1\r\n---\r\nbody', opts);
  t.equal(fm.frontmatter.present, true);
  t.same(fm.frontmatter.data, { a: 1 });
  t.equal(fm.frontmatter.bodyStart, 3 + 5 + 6 + 5);
});

t.test('unclosed code fence masks to the end of the note', async (t) => {
  const m = parseNote('# H\n```\n# not a heading\n[[not a link]]\n', opts);
  t.equal(m.outline.length, 1);
  t.equal(m.links.length, 0);
});

t.test(
  'a frontmatter block parsed again (an edit below it) gives an equal model that shares nothing with the first',
  async (t) => {
    const text = '---\ntags: [a, b]\nnested:\n  list: [1, 2]\n---\n# Body\n';
    const first = parseNote(text, opts);
    (first.frontmatter.data!.nested as { list: number[] }).list.push(3);
    first.frontmatter.data!.tags = 'changed';
    const second = parseNote(`${text}appended line\n`, opts);
    t.same(
      second.frontmatter.data,
      { tags: ['a', 'b'], nested: { list: [1, 2] } },
      'changing one model never reaches the next',
    );
    const third = parseNote(`${text}another\n`, opts);
    t.not(third.frontmatter.data, second.frontmatter.data, 'each parse returns its own object');
    const bad = '---\nkey: [unclosed\n---\nbody\n';
    t.equal(parseNote(bad, opts).frontmatter.error?.code, 'malformed_yaml');
    t.equal(
      parseNote(`${bad}more\n`, opts).frontmatter.error?.code,
      'malformed_yaml',
      'a refused block is refused again',
    );
    t.equal(parseNote('---\ntitle: Moved\n---\n', opts).frontmatter.error?.line, undefined);
  },
);

t.test(
  'thousands of unclosed inline openers in one paragraph go to the line scanner (micromark is quadratic there)',
  async (t) => {
    // Both were found by the adversarial fuzz test: seconds in micromark, milliseconds in the line scanner.
    for (const [unit, tail] of [
      ['[a](', '~'],
      ['<!--', 'a'],
      ['`a', 'x'],
    ]) {
      const text = `# T\n\na ${unit.repeat(Math.floor(24_576 / unit.length))} ${tail}\n\n\`\`\`\ncode\n\`\`\`\n`;
      const m = parseNote(text, opts);
      t.match(m.problems.join(' '), /many_openers/, `${unit} × many`);
      t.equal(m.outline[0]?.text, 'T', 'headings still found');
    }
    const ordinary = `# T\n\n${'See [[Note]] and [a](b) here. '.repeat(300)}\n`;
    t.notMatch(
      parseNote(ordinary, opts).problems.join(' '),
      /many_openers/,
      'an ordinary long paragraph stays with micromark',
    );
  },
);
