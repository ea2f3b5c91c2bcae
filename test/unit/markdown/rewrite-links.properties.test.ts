// Property: after any move (note or attachment), every link that resolved before resolves to the same file
// after (the moved one at its new path), unless the plan lists it; and no byte outside link text changes.
import t from 'tap';
import fc from 'fast-check';
import {
  buildLinkIndex,
  parseNote,
  planLinkRewrites,
  resolveLink,
  type SourceNote,
} from '../../../src/markdown/index.js';

const FILES = [
  'a/Note.md',
  'b/Note.md',
  'a/Plan.md',
  'Top.md',
  'img/pic.png',
  'img/Deep/pic2.png',
  'Books.base',
  'c/Other One.md',
];
const LINKS = [
  '[[Note]]',
  '[[Plan]]',
  '[[Plan#H|x]]',
  '![[Plan#^b]]',
  '[[a/Plan]]',
  '[[./Plan]]',
  '[[../a/Plan|p]]',
  '[[Top]]',
  '[[top.md]]',
  '![[pic.png#center|300]]',
  '![[img/pic.png]]',
  '![](../img/pic.png)',
  '[[Books.base#View]]',
  '[o](../c/Other%20One.md#h)',
  '[o](<Other One.md>)',
  '[[Other One]]',
  '`[[Plan]]`',
  '[[Plan\\|t]]',
  '[[nowhere/Plan]]',
  '[[#Local]]',
];
const TARGETS = [
  'a/Plan2.md',
  'b/Plan.md',
  'z/Top.md',
  'Top2.md',
  'img/pic3.png',
  'x/pic.png',
  'Bases/Books.base',
  'c/Other Two.md',
  'b/Deep/Plan.md',
];

const withoutLinks = (text: string, path: string): string[] => {
  const bytes = Buffer.from(text, 'utf8');
  const out: string[] = [];
  let at = 0;
  for (const l of parseNote(text, { path }).links) {
    out.push(bytes.subarray(at, l.start).toString('utf8'));
    at = l.end;
  }
  out.push(bytes.subarray(at).toString('utf8'));
  return out;
};

t.test('moves keep every resolved link resolving and every other byte in place', async (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.constantFrom(...LINKS), fc.constantFrom(' ', '\n', '\r\n', ' and ')), {
        minLength: 1,
        maxLength: 10,
      }),
      fc.constantFrom(...FILES.filter((f) => f !== 'a/Linker.md')),
      fc.constantFrom(...TARGETS),
      fc.constantFrom('a/Linker.md', 'Linker.md', 'c/d/Linker.md'),
      (parts, from, rawTo, linker) => {
        const to =
          from.endsWith('.md') === rawTo.endsWith('.md')
            ? rawTo
            : from.endsWith('.md')
              ? `${rawTo}.md`
              : `${rawTo}.bin`;
        const files = [...FILES, linker];
        if (files.includes(to)) return true;
        const text = parts.map(([l, sep]) => l + sep).join('') + '\n# Local\n';
        const pre = buildLinkIndex(files);
        const post = buildLinkIndex([...files.filter((f) => f !== from), to]);
        const src = { path: linker, text, model: parseNote(text, { path: linker }) };
        const sources: SourceNote[] = [src];
        if (from.endsWith('.md')) sources.push({ path: from, text: 'x\n', model: parseNote('x\n', { path: from }) });
        const plan = planLinkRewrites(from, to, sources, pre, post, 1000);
        if (plan.problem) return false;
        const out = plan.plans.find((p) => p.path === linker)?.text ?? text;
        if (withoutLinks(out, linker).join('\u0000') !== withoutLinks(text, linker).join('\u0000')) return false;
        const before = src.model.links;
        const after = parseNote(out, { path: linker }).links;
        if (before.length !== after.length) return false;
        for (let i = 0; i < before.length; i++) {
          const r = resolveLink(before[i].target, linker, pre);
          if (r.resolved === null) {
            if (after[i].raw !== before[i].raw) return false; // dangling and ambiguous links are never rewritten
            continue;
          }
          const want = r.resolved === from ? to : r.resolved;
          const got = resolveLink(after[i].target, linker, post).resolved;
          const listed = plan.leftAlone.some(
            (a) => a.line === before[i].line && (a.reason === 'changed_by_move' || a.reason === 'unrewritable'),
          );
          if (got !== want && !listed) return false;
          if (
            (before[i].alias ?? '') !== (after[i].alias ?? '') ||
            (before[i].anchor ?? '') !== (after[i].anchor ?? '') ||
            before[i].embed !== after[i].embed
          )
            return false;
        }
        return true;
      },
    ),
    { numRuns: 500 },
  );
});
