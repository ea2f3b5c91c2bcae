// Property tests for the notes family's pure edits: section round trips are no-ops, frontmatter edits
// touch only the named keys, tag renames reverse cleanly, and move rewrites re-aim exactly the right links.
import t from 'tap';
import fc from 'fast-check';
import { buildLinkIndex, parseNote, resolveLink } from '../../../src/markdown/index.js';
import { replaceSection, sectionBody, unclosedIndentedFence } from '../../../plugins/notes/edits/sections.js';
import { editFrontmatter } from '../../../plugins/notes/edits/frontmatter.js';
import { renameTagInNote } from '../../../plugins/notes/edits/tags.js';
import { planLinkRewrites, relativePath } from '../../../src/markdown/rewrite-links.js';
import { regexReplace } from '../../../plugins/notes/edits/regex-worker.js';

const note = (path: string, text: string) => ({ path, text, model: parseNote(text, { path }) });
const word = fc.stringMatching(/^[a-z]{1,8}$/);
const line = fc.oneof(
  word.map((w) => `text ${w}`),
  word.map((w) => `- item ${w}`),
  fc.constant(''),
  word.map((w) => `${'#'.repeat(1 + (w.length % 3))} ${w}`),
);

t.test('edit_note(section) with the body read_note returns is a no-op on LF notes', async (t) => {
  fc.assert(
    fc.property(fc.array(line, { minLength: 1, maxLength: 25 }), fc.boolean(), (lines, trailing) => {
      const text = lines.join('\n') + (trailing ? '\n' : '');
      const n = note('n.md', text);
      for (const h of n.model.outline) {
        const r = replaceSection(n, `#${h.ordinal}`, sectionBody(n, h));
        if (r.text !== text) return false;
      }
      return true;
    }),
    { numRuns: 300 },
  );
});

t.test('set_frontmatter changes only the named key; other lines and the body stay byte-identical', async (t) => {
  const key = fc.stringMatching(/^[a-z]{1,6}$/);
  const value = fc.oneof(fc.integer(), fc.boolean(), word, fc.array(word, { maxLength: 3 }));
  fc.assert(
    fc.property(
      fc.uniqueArray(key, { minLength: 2, maxLength: 6 }),
      value,
      fc.array(line, { maxLength: 6 }),
      (keys, v, body) => {
        const yamlLines = keys.map((k, i) => (i % 2 === 0 ? `${k}: "v${i}"  # c${i}` : `${k}: ${i}`));
        const text = `---\n# head\n${yamlLines.join('\n')}\n---\n${body.join('\n')}`;
        const n = note('n.md', text);
        const target = keys[1];
        const r = editFrontmatter(n, { [target]: v }, []);
        const after = r.text.split('\n');
        const untouched = ['# head', ...yamlLines.filter((_, i) => i !== 1)];
        const bodyOk = r.text.endsWith(`---\n${body.join('\n')}`);
        return (
          bodyOk &&
          untouched.every((l) => after.includes(l)) &&
          parseNote(r.text, { path: 'n.md' }).frontmatter.data?.[target] !== undefined
        );
      },
    ),
    { numRuns: 200 },
  );
});

t.test('rename_tag then the reverse rename restores the note byte for byte', async (t) => {
  const tagLine = fc.oneof(
    line,
    fc.constant('see #alpha here'),
    fc.constant('#alpha/deep and `#alpha`'),
    fc.constant('```\n#alpha\n```'),
  );
  fc.assert(
    fc.property(fc.array(tagLine, { maxLength: 12 }), fc.boolean(), (lines, withFm) => {
      const text = (withFm ? '---\ntags: [alpha, other]\n---\n' : '') + lines.join('\n') + '\n';
      const a = renameTagInNote(note('n.md', text), 'alpha', 'omega');
      if (a.text.includes('#alpha ') || /#alpha\//.test(a.text.replace(/`[^`]*`|```[\s\S]*?```/g, ''))) return false;
      const b = renameTagInNote(note('n.md', a.text), 'omega', 'alpha');
      return b.text === text;
    }),
    { numRuns: 300 },
  );
});

t.test(
  'move rewrites change only links that resolved to the moved note, and those resolve to the new path',
  async (t) => {
    const linkForm = fc.constantFrom(
      '[[Moved]]',
      '[[Moved|alias]]',
      '[[Moved#Head]]',
      '![[Moved]]',
      '[[dir/Moved]]',
      '[m](../dir/Moved.md)',
      '[[Other]]',
      '[[Same]]',
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(linkForm, word), { minLength: 1, maxLength: 8 }),
        fc.constantFrom('dir/Renamed.md', 'elsewhere/Moved.md', 'deep/er/Nm.md'),
        (parts, to) => {
          const from = 'dir/Moved.md';
          const srcText = parts.map(([l, w]) => `${w} ${l}`).join('\n') + '\n';
          const files = [from, 'src/Linker.md', 'dir/Other.md', 'x/Same.md', 'y/Same.md'];
          const pre = buildLinkIndex(files);
          const post = buildLinkIndex([...files.filter((f) => f !== from), to]);
          const src = note('src/Linker.md', srcText);
          const { plans } = planLinkRewrites(from, to, [src], pre, post, 1000);
          const out = plans[0]?.text ?? srcText;
          const before = src.model.links;
          const after = parseNote(out, { path: 'src/Linker.md' }).links;
          if (before.length !== after.length) return false;
          for (let i = 0; i < before.length; i++) {
            const r = resolveLink(before[i].target, 'src/Linker.md', pre);
            const moved = r.resolved === from && !r.ambiguous;
            if (!moved && after[i].raw !== before[i].raw) return false;
            if (moved && resolveLink(after[i].target, 'src/Linker.md', post).resolved !== to) return false;
            if (moved && (before[i].alias ?? '') !== (after[i].alias ?? '')) return false;
          }
          return true;
        },
      ),
      { numRuns: 300 },
    );
  },
);

t.test('small pure helpers', async (t) => {
  t.equal(relativePath('a/b', 'a/c/d.md'), '../c/d.md');
  t.equal(relativePath('', 'x.md'), 'x.md');
  t.equal(unclosedIndentedFence('# h\n  ```\nx\n'), 2);
  t.equal(unclosedIndentedFence('# h\n```\nx\n'), null);
  t.same(regexReplace({ text: 'a1 b2', pattern: '([a-z])(\\d)', flags: 'u', replacement: '$2$1', max: 0 }), {
    text: '1a 2b',
    count: 2,
  });
  const fm = editFrontmatter(note('n.md', '---\na: 1\n---\nbody'), {}, ['a']);
  t.equal(fm.text, 'body');
  t.equal(editFrontmatter(note('n.md', '---\na: true\n---\n'), { a: true }, []).changed, false);
  t.equal(editFrontmatter(note('n.md', '---\na: true\n---\n'), { a: 1 }, []).changed, true);
});
