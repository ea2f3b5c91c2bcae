// Compiling an expression: parse it, refuse by name what the engine does not evaluate (unknown functions and
// methods, regular expressions that could backtrack without bound), collect what it needs (formulas, links), and
// build its evaluator. Pure: no I/O. Everything refused here is refused before a single row is read.
import { basesRefusals } from '../refusals.js';
import { compileEvaluator } from './evaluate.js';
import { GLOBALS } from './functions.js';
import { METHODS } from './methods/index.js';
import { clipExpr, type Node, type ParseLimits, parseExpression } from './parser.js';
import type { Ev } from './runtime.js';

export interface Compiled {
  readonly source: string;
  readonly tree: Node;
  /** The expression's value for a row. */
  readonly ev: Ev;
  /** Formulas it names (formula.x, formula["x"]). */
  readonly formulas: ReadonlySet<string>;
  /** Whether it reads links (file.links, file.backlinks, file.embeds, hasLink, linksTo). */
  readonly needsLinks: boolean;
  readonly needsCtime: boolean;
  /** Whether it may resolve a link to any file (link(), file(), asFile, asLink, hasLink, linksTo). */
  readonly resolvesFiles: boolean;
}

export interface CompileState {
  readonly limits: ParseLimits;
  readonly regexes: WeakMap<Node, RegExp>;
}

const LINK_FIELDS = new Set(['links', 'backlinks', 'embeds']);
const LINK_METHODS = new Set(['hasLink', 'linksTo']);
const RESOLVING = new Set(['link', 'file', 'asFile', 'asLink', 'hasLink', 'linksTo']);

export function compileExpression(source: string, state: CompileState, where: string): Compiled {
  const tree = parseExpression(source, state.limits);
  const formulas = new Set<string>();
  let needsLinks = false;
  let needsCtime = false;
  let resolvesFiles = false;
  const unsupported = (feature: string): never =>
    basesRefusals.refuse('bases_unsupported', { feature, where: `${where}: ${clipExpr(source)}` });
  const walk = (n: Node): void => {
    switch (n.t) {
      case 'lit':
      case 'id':
        return;
      case 'regex':
        state.regexes.set(n, safeRegex(n.source, n.flags, source, where));
        return;
      case 'member':
        if (n.obj.t === 'id' && n.obj.name === 'formula') formulas.add(n.name);
        if (LINK_FIELDS.has(n.name)) needsLinks = true;
        if (n.name === 'ctime') needsCtime = true;
        walk(n.obj);
        return;
      case 'index':
        if (n.obj.t === 'id' && n.obj.name === 'formula' && n.idx.t === 'lit' && typeof n.idx.v === 'string')
          formulas.add(n.idx.v);
        walk(n.obj);
        walk(n.idx);
        return;
      case 'call':
        if ((n.callee.t === 'id' || n.callee.t === 'member') && RESOLVING.has(n.callee.name)) resolvesFiles = true;
        if (n.callee.t === 'id') {
          if (!GLOBALS.has(n.callee.name)) unsupported(`the function ${n.callee.name}()`);
        } else if (n.callee.t === 'member') {
          if (!METHODS.has(n.callee.name)) unsupported(`the method .${n.callee.name}()`);
          if (LINK_METHODS.has(n.callee.name)) needsLinks = true;
          walk(n.callee.obj);
        }
        for (const a of n.args) walk(a);
        return;
      case 'unary':
        walk(n.arg);
        return;
      case 'bin':
        walk(n.l);
        walk(n.r);
        return;
      case 'list':
        for (const x of n.items) walk(x);
        return;
      case 'obj':
        for (const [, x] of n.entries) walk(x);
        return;
    }
  };
  walk(tree);
  const ev = compileEvaluator(tree, state.regexes);
  return { source, tree, ev, formulas, needsLinks, needsCtime, resolvesFiles };
}

/**
 * A regular expression the engine will run: JavaScript's engine backtracks, so patterns whose time can grow
 * without bound on a long value — a quantified group that itself holds a quantifier or an alternation, and
 * backreferences — are refused by name rather than run.
 */
export function safeRegex(src: string, flags: string, expression: string, where: string): RegExp {
  const refuse = (problem: string): never =>
    basesRefusals.refuse('bases_unsupported', {
      feature: `the regular expression /${src.slice(0, 60)}/ (${problem})`,
      where: `${where}: ${clipExpr(expression)}`,
    });
  if (src.length > 256) refuse('longer than 256 characters');
  if (/\\[1-9]|\\k</.test(src)) refuse('backreferences can take exponential time');
  const groups: { quantified: boolean }[] = [];
  let inClass = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') groups.push({ quantified: false });
    else if (c === '|' && groups.length) groups[groups.length - 1].quantified = true;
    else if (c === ')') {
      const g = groups.pop();
      const q = src[i + 1];
      const isQuant = q === '*' || q === '+' || q === '{' || q === '?';
      if (g?.quantified && isQuant && q !== '?')
        refuse('a repeated group holding a repetition or an alternation can backtrack without bound');
      if (isQuant && groups.length) groups[groups.length - 1].quantified = true;
      if (g?.quantified && groups.length) groups[groups.length - 1].quantified = true;
    } else if ((c === '*' || c === '+' || c === '{') && groups.length) groups[groups.length - 1].quantified = true;
  }
  try {
    return new RegExp(src, flags.replace(/y/g, ''));
  } catch (e) {
    return basesRefusals.refuse('bases_syntax', {
      expression: clipExpr(expression),
      problem: `an invalid regular expression: ${(e as Error).message}`,
      position: 0,
    });
  }
}
