// The Bases expression language: a lexer and a Pratt parser into a small tree, bounded in size and depth.
// Pure: no I/O, no clock. Anything it cannot read is a typed refusal (bases_syntax / bases_too_complex), never a throw.
import { basesRefusals } from '../refusals.js';

export type Node =
  | { readonly t: 'lit'; readonly v: string | number | boolean | null }
  | { readonly t: 'id'; readonly name: string }
  | { readonly t: 'member'; readonly obj: Node; readonly name: string }
  | { readonly t: 'index'; readonly obj: Node; readonly idx: Node }
  | { readonly t: 'call'; readonly callee: Node; readonly args: readonly Node[] }
  | { readonly t: 'unary'; readonly op: '!' | '-'; readonly arg: Node }
  | { readonly t: 'bin'; readonly op: BinOp; readonly l: Node; readonly r: Node }
  | { readonly t: 'list'; readonly items: readonly Node[] }
  | { readonly t: 'obj'; readonly entries: readonly (readonly [string, Node])[] }
  | { readonly t: 'regex'; readonly source: string; readonly flags: string };

export type BinOp = '||' | '&&' | '==' | '!=' | '<' | '<=' | '>' | '>=' | '+' | '-' | '*' | '/' | '%';

export interface ParseLimits {
  /** Most characters one expression may hold. */
  readonly maxChars: number;
  /** Deepest nesting of the tree (parentheses, calls, operators). */
  readonly maxDepth: number;
  /** Most tree nodes one expression may produce. */
  readonly maxNodes: number;
}

type Tok =
  | { k: 'num'; v: number; at: number }
  | { k: 'str'; v: string; at: number }
  | { k: 'id'; v: string; at: number }
  | { k: 'op'; v: string; at: number }
  | { k: 'regex'; v: string; flags: string; at: number }
  | { k: 'eof'; at: number };

const OPS = [
  '==',
  '!=',
  '<=',
  '>=',
  '&&',
  '||',
  '<',
  '>',
  '+',
  '-',
  '*',
  '/',
  '%',
  '!',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  ',',
  '.',
  ':',
];

/** Binding power of each binary operator (higher binds tighter). */
const BP: Record<string, number> = {
  '||': 1,
  '&&': 2,
  '==': 3,
  '!=': 3,
  '<': 4,
  '<=': 4,
  '>': 4,
  '>=': 4,
  '+': 5,
  '-': 5,
  '*': 6,
  '/': 6,
  '%': 6,
};
const UNARY_BP = 7;

function syntax(expression: string, problem: string, position: number): never {
  return basesRefusals.refuse('bases_syntax', { expression: clipExpr(expression), problem, position });
}

export function clipExpr(e: string): string {
  const flat = e.replace(/\s+/g, ' ');
  return flat.length <= 120 ? flat : `${flat.slice(0, 119)}…`;
}

function lex(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  // A `/` starts a regular expression where an operand is expected (start, after an operator or opener).
  const operandExpected = () => {
    const last = out[out.length - 1];
    return !last || (last.k === 'op' && last.v !== ')' && last.v !== ']' && last.v !== '}');
  };
  while (i < src.length) {
    const c = src[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    const at = i;
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      const m = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/.exec(src.slice(i, i + 64));
      if (!m) syntax(src, 'a malformed number', at);
      out.push({ k: 'num', v: Number(m[0]), at });
      i += m[0].length;
      continue;
    }
    if (c === '"' || c === "'") {
      let s = '';
      i++;
      for (;;) {
        if (i >= src.length) syntax(src, 'an unclosed string', at);
        const d = src[i];
        if (d === c) {
          i++;
          break;
        }
        if (d === '\\') {
          const e = src[i + 1];
          if (e === undefined) syntax(src, 'an unclosed string', at);
          s += e === 'n' ? '\n' : e === 't' ? '\t' : e;
          i += 2;
          continue;
        }
        s += d;
        i++;
      }
      out.push({ k: 'str', v: s, at });
      continue;
    }
    if (/[A-Za-z_$\p{L}]/u.test(c)) {
      const name = /^[A-Za-z_$\p{L}][A-Za-z0-9_$\p{L}\p{N}]*/u.exec(src.slice(i, i + 256))![0];
      out.push({ k: 'id', v: name, at });
      i += name.length;
      continue;
    }
    if (c === '/' && operandExpected()) {
      let j = i + 1;
      let inClass = false;
      for (;;) {
        const d = src[j];
        if (d === undefined || d === '\n') syntax(src, 'an unclosed regular expression', at);
        if (d === '\\') {
          j += 2;
          continue;
        }
        if (d === '[') inClass = true;
        else if (d === ']') inClass = false;
        else if (d === '/' && !inClass) break;
        j++;
      }
      const fm = /^[dgimsuy]*/.exec(src.slice(j + 1))![0];
      out.push({ k: 'regex', v: src.slice(i + 1, j), flags: fm, at });
      i = j + 1 + fm.length;
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op) syntax(src, `an unexpected character "${c}"`, at);
    out.push({ k: 'op', v: op, at });
    i += op.length;
  }
  out.push({ k: 'eof', at: src.length });
  return out;
}

/** Parse one expression, or refuse naming what is wrong and where. */
export function parseExpression(src: string, limits: ParseLimits): Node {
  if (typeof src !== 'string')
    basesRefusals.refuse('bases_invalid', { problem: `an expression must be a string, got ${JSON.stringify(src)}` });
  if (src.length > limits.maxChars)
    basesRefusals.refuse('bases_too_complex', {
      problem: `an expression of ${src.length} characters (the most is ${limits.maxChars})`,
      setting: 'bases.maxExpressionChars',
    });
  if (src.trim() === '') syntax(src, 'an empty expression', 0);
  const toks = lex(src);
  let pos = 0;
  let nodes = 0;
  const peek = () => toks[pos];
  const next = () => toks[pos++];
  const isOp = (v: string) => {
    const t = toks[pos];
    return t.k === 'op' && t.v === v;
  };
  const expect = (v: string) => {
    const t = next();
    if (t.k !== 'op' || t.v !== v) syntax(src, `"${v}" expected`, t.at);
  };
  const node = <N extends Node>(n: N, depth: number): N => {
    if (++nodes > limits.maxNodes)
      basesRefusals.refuse('bases_too_complex', {
        problem: `an expression of more than ${limits.maxNodes} parts`,
        setting: 'bases.maxExpressionNodes',
      });
    if (depth > limits.maxDepth)
      basesRefusals.refuse('bases_too_complex', {
        problem: `an expression nested deeper than ${limits.maxDepth}`,
        setting: 'bases.maxExpressionDepth',
      });
    return n;
  };
  const args = (close: string, depth: number): Node[] => {
    const out: Node[] = [];
    if (isOp(close)) {
      next();
      return out;
    }
    for (;;) {
      out.push(expr(0, depth + 1));
      if (isOp(',')) {
        next();
        if (isOp(close)) break; // a trailing comma
        continue;
      }
      break;
    }
    expect(close);
    return out;
  };
  const prefix = (depth: number): Node => {
    if (depth > limits.maxDepth) node({ t: 'lit', v: null }, depth);
    const t = next();
    switch (t.k) {
      case 'num':
        return node({ t: 'lit', v: t.v }, depth);
      case 'str':
        return node({ t: 'lit', v: t.v }, depth);
      case 'regex':
        return node({ t: 'regex', source: t.v, flags: t.flags }, depth);
      case 'id':
        if (t.v === 'true' || t.v === 'false') return node({ t: 'lit', v: t.v === 'true' }, depth);
        if (t.v === 'null') return node({ t: 'lit', v: null }, depth);
        return node({ t: 'id', name: t.v }, depth);
      case 'eof':
        return syntax(src, 'the expression ends too early', t.at);
      default:
        break;
    }
    switch (t.v) {
      case '(': {
        const inner = expr(0, depth + 1);
        expect(')');
        return inner;
      }
      case '!':
      case '-':
        return node({ t: 'unary', op: t.v, arg: expr(UNARY_BP, depth + 1) }, depth);
      case '[':
        return node({ t: 'list', items: args(']', depth) }, depth);
      case '{': {
        const entries: [string, Node][] = [];
        while (!isOp('}')) {
          const k = next();
          if (k.k !== 'str' && k.k !== 'id') syntax(src, 'an object key expected', k.at);
          expect(':');
          entries.push([String(k.v), expr(0, depth + 1)]);
          if (!isOp(',')) break;
          next();
        }
        expect('}');
        return node({ t: 'obj', entries }, depth);
      }
      default:
        return syntax(src, `an unexpected "${t.v}"`, t.at);
    }
  };
  const expr = (minBp: number, depth: number): Node => {
    let left = prefix(depth);
    for (;;) {
      const t = peek();
      if (t.k !== 'op') {
        if (t.k === 'eof') break;
        syntax(src, `an operator expected before "${String(t.k === 'regex' ? `/${t.v}/` : t.v)}"`, t.at);
      }
      if (t.v === '.') {
        next();
        const name = next();
        if (name.k !== 'id') syntax(src, 'a name expected after "."', name.at);
        left = node({ t: 'member', obj: left, name: name.v }, depth);
        continue;
      }
      if (t.v === '[') {
        next();
        const idx = expr(0, depth + 1);
        expect(']');
        left = node({ t: 'index', obj: left, idx }, depth);
        continue;
      }
      if (t.v === '(') {
        if (left.t !== 'id' && left.t !== 'member') syntax(src, 'only a function or method can be called', t.at);
        next();
        left = node({ t: 'call', callee: left, args: args(')', depth) }, depth);
        continue;
      }
      const bp = BP[t.v];
      if (bp === undefined || bp <= minBp) break;
      next();
      left = node({ t: 'bin', op: t.v as BinOp, l: left, r: expr(bp, depth + 1) }, depth);
    }
    return left;
  };
  const tree = expr(0, 0);
  const rest = peek();
  if (rest.k !== 'eof') syntax(src, `an unexpected "${String((rest as { v?: unknown }).v)}"`, rest.at);
  return tree;
}
