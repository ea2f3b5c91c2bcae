// YAML parsing with a nesting bound checked before any recursion: yaml's Parser builds its concrete syntax
// tree with an explicit stack, but its Composer recurses once per nesting level. Never composes a tree deeper
// than the bound it is given.
import {
  CST,
  Composer,
  Lexer,
  Parser,
  YAMLParseError,
  type Document,
  type DocumentOptions,
  type ParseOptions,
  type SchemaOptions,
} from 'yaml';

/**
 * Why the bound is needed: yaml's Composer recurses per level and catches the stack overflow as a
 * RESOURCE_EXHAUSTION error. Catching is not safe in V8: a regular expression compiled (first use, or
 * tier-up to native code) while the stack is nearly exhausted is a fatal `RegExpCompiler Allocation failed -
 * process out of memory`, which ends the whole process — from a worker thread too, and whatever the
 * worker's resourceLimits. `deep: [[[[…]]]]` with 20,000 brackets did exactly that (issue 35).
 */
export type BoundedYaml = { ok: true; doc: Document.Parsed } | { ok: false; depth: number; offset: number };

type Options = ParseOptions & DocumentOptions & SchemaOptions;

/**
 * parseDocument(source, options), except that a source whose collections nest deeper than `maxDepth`
 * (flow `[`/`{`, block maps and sequences, `- - -` on one line alike) is not composed: the answer names the
 * depth reached (counting stops one past the bound) and the offset where the bound was crossed.
 * Linear in the source's size; no recursion on the input's shape.
 */
export function parseDocumentBounded(source: string, maxDepth: number, options: Options = {}): BoundedYaml {
  // Each collection owns at least one indicator of its own (a map its `:` or `?`, a sequence its `-`, a flow
  // collection its `[` or `{`), so a source with no more of those characters than the bound cannot nest past
  // it: most frontmatter, whose checks below would cost a quarter of its parse (the lexer pass).
  const bounded = indicatorsAtMost(source, maxDepth);
  // yaml's Parser takes ~10-30 µs per nesting bracket (a 40 KB run took 0.3-1.5 s); its Lexer is several
  // times faster and already knows which brackets open collections, so the cheap attack is refused first.
  const lexed = bounded ? null : lexedDepthOver(source, maxDepth);
  if (lexed) return { ok: false, ...lexed };
  const tokens = Array.from(new Parser().parse(source));
  if (!bounded) {
    for (const token of tokens) {
      const over = firstTooDeep(token, maxDepth);
      if (over) return { ok: false, ...over };
    }
  }
  const composer = new Composer(options);
  let doc: Document.Parsed | null = null;
  for (const next of composer.compose(tokens, true, source.length)) {
    if (!doc) doc = next;
    else {
      // As parseDocument has it: the first document, with an error for any further one.
      const message = 'Source contains multiple documents; please use YAML.parseAllDocuments()';
      doc.errors.push(new YAMLParseError([next.range[0], next.range[1]], 'MULTIPLE_DOCS', message));
      break;
    }
  }
  // compose(…, forceDoc = true) always yields at least one document.
  return { ok: true, doc: doc! };
}

/** Whether `source` holds at most `limit` of the characters a collection's indicator can be (`:` `?` `-` `[` `{`). */
function indicatorsAtMost(source: string, limit: number): boolean {
  let n = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source.charCodeAt(i);
    // : ? - [ {
    if ((c === 58 || c === 63 || c === 45 || c === 91 || c === 123) && ++n > limit) return false;
  }
  return true;
}

/**
 * A lower bound of the nesting depth from the lexer's tokens alone: open flow collections (the lexer tells a
 * collection's `[` from one inside a scalar) plus compact block indicators run together on one line
 * (`- - - x`, `? ? x`: each opens a collection inside the previous one). Where it exceeds maxDepth the
 * document nests at least that deep; nesting by indentation costs bytes quadratic in the depth and is left
 * to the exact walk over the syntax tree.
 */
function lexedDepthOver(source: string, maxDepth: number): { depth: number; offset: number } | null {
  let flow = 0;
  let run = 0;
  let offset = 0;
  let afterScalarMarker = false;
  for (const token of new Lexer().lex(source)) {
    if (afterScalarMarker) {
      afterScalarMarker = false;
      offset += token.length;
      continue;
    }
    const at = offset;
    switch (token) {
      case CST.DOCUMENT:
        continue;
      case CST.SCALAR:
        afterScalarMarker = true;
        run = 0;
        continue;
      case CST.FLOW_END:
        flow = 0;
        run = 0;
        continue;
    }
    offset += token.length;
    switch (CST.tokenType(token)) {
      case 'flow-map-start':
      case 'flow-seq-start':
        flow++;
        break;
      case 'flow-map-end':
      case 'flow-seq-end':
        if (flow > 0) flow--;
        break;
      case 'seq-item-ind':
      case 'explicit-key-ind':
        if (flow === 0) run++;
        break;
      case 'space':
        continue;
      case 'doc-start':
      case 'doc-end':
        flow = 0;
        run = 0;
        break;
      default:
        run = 0;
    }
    if (flow + run > maxDepth) return { depth: flow + run, offset: at };
  }
  return null;
}

/** The first place `token`'s collections nest deeper than maxDepth, walked with an explicit stack. */
function firstTooDeep(token: CST.Token, maxDepth: number): { depth: number; offset: number } | null {
  const stack: Array<{ t: CST.Token; depth: number }> = [{ t: token, depth: 0 }];
  while (stack.length > 0) {
    const { t, depth } = stack.pop()!;
    switch (t.type) {
      case 'document':
        if (t.value) stack.push({ t: t.value, depth });
        break;
      case 'block-map':
      case 'block-seq':
      case 'flow-collection': {
        const d = depth + 1;
        if (d > maxDepth) return { depth: d, offset: t.offset };
        for (const item of t.items as ReadonlyArray<{ key?: CST.Token | null; value?: CST.Token }>) {
          if (item.key) stack.push({ t: item.key, depth: d });
          if (item.value) stack.push({ t: item.value, depth: d });
        }
        break;
      }
      default:
        break;
    }
  }
  return null;
}
