// The evaluator of the Bases expression language: an expression tree compiled once into closures (namespaces
// note/file/formula/this resolved, functions, methods and operators picked by name), then run per row, every
// node counted against the work budget. A runtime type error is a cell error (EvalError), as in Obsidian.
import { fileField, formulaValue, member, rowProperty } from './fields.js';
import { GLOBALS } from './functions.js';
import { methodNamed } from './methods/index.js';
import { negate, operator } from './operators.js';
import type { Node } from './parser.js';
import {
  type EvalContext,
  EvalError,
  type Ev,
  type Locals,
  LOCAL_NAMES,
  Namespace,
  type Row,
  type Scoped,
  type ScopedEv,
  step,
} from './runtime.js';
import { BFile, BRegex, isObject, setOwn, truthy, typeOf, type Value } from './values.js';

/** Compile an expression tree (its regular expressions already checked and built) into its evaluator. */
export function compileEvaluator(node: Node, regexes: WeakMap<Node, RegExp>): Ev {
  return new Compiler(regexes).value(node);
}

class Compiler {
  constructor(private readonly regexes: WeakMap<Node, RegExp>) {}

  /** A node as a value: a namespace named on its own (`note`, `this`) is the file `this`, or an error. */
  value(node: Node): Ev {
    const ev = this.scoped(node);
    const mayBeNamespace =
      (node.t === 'id' && (node.name === 'note' || node.name === 'formula' || node.name === 'this')) ||
      (node.t === 'member' && node.name === 'note') ||
      node.t === 'index';
    if (!mayBeNamespace) return ev as Ev;
    return (row, ctx, locals) => {
      const v = ev(row, ctx, locals);
      if (v instanceof Namespace) {
        if (v.kind === 'this' && v.rec) return new BFile(v.rec);
        throw new EvalError(`"${v.kind}" is a namespace, not a value: name one of its members`);
      }
      return v;
    };
  }

  private scoped(node: Node): ScopedEv {
    switch (node.t) {
      case 'lit': {
        const v = node.v;
        return (_row, ctx) => {
          step(ctx);
          return v;
        };
      }
      case 'regex': {
        const re = this.regexes.get(node)!;
        return (_row, ctx) => {
          step(ctx);
          return new BRegex(re);
        };
      }
      case 'list': {
        const items = node.items.map((x) => this.value(x));
        return (row, ctx, locals) => {
          step(ctx);
          return items.map((ev) => ev(row, ctx, locals));
        };
      }
      case 'obj': {
        const entries = node.entries.map(([k, x]) => [k, this.value(x)] as const);
        return (row, ctx, locals) => {
          step(ctx);
          const out: Record<string, Value> = {};
          for (const [k, ev] of entries) setOwn(out, k, ev(row, ctx, locals));
          return out;
        };
      }
      case 'id':
        return identifier(node.name);
      case 'member':
        return this.member(node.obj, node.name);
      case 'index': {
        const obj = this.scoped(node.obj);
        const idx = this.value(node.idx);
        return (row, ctx, locals) => {
          step(ctx);
          return index(obj(row, ctx, locals), idx(row, ctx, locals), row, ctx);
        };
      }
      case 'unary': {
        const arg = this.value(node.arg);
        if (node.op === '!')
          return (row, ctx, locals) => {
            step(ctx);
            return !truthy(arg(row, ctx, locals));
          };
        return (row, ctx, locals) => {
          step(ctx);
          return negate(arg(row, ctx, locals));
        };
      }
      case 'bin': {
        const l = this.value(node.l);
        const r = this.value(node.r);
        if (node.op === '&&')
          return (row, ctx, locals) => {
            step(ctx);
            return truthy(l(row, ctx, locals)) ? truthy(r(row, ctx, locals)) : false;
          };
        if (node.op === '||')
          return (row, ctx, locals) => {
            step(ctx);
            return truthy(l(row, ctx, locals)) ? true : truthy(r(row, ctx, locals));
          };
        const op = operator(node.op);
        return (row, ctx, locals) => {
          step(ctx);
          const lv = l(row, ctx, locals);
          return op(lv, r(row, ctx, locals), ctx);
        };
      }
      case 'call':
        return this.call(node);
    }
  }

  /** `x.name`; on a bare namespace (`file.`, `note.`, `formula.`) read straight from the row (two steps, as walked). */
  private member(objNode: Node, name: string): ScopedEv {
    if (objNode.t === 'id' && !LOCAL_NAMES.has(objNode.name)) {
      switch (objNode.name) {
        case 'file':
          return (row, ctx) => {
            step(ctx, 2);
            return fileField(row.rec, name, ctx);
          };
        case 'note':
          return (row, ctx) => {
            step(ctx, 2);
            return rowProperty(row, name, ctx);
          };
        case 'formula':
          return (row, ctx) => {
            step(ctx, 2);
            return formulaValue(name, row, ctx);
          };
      }
    }
    const obj = this.scoped(objNode);
    return (row, ctx, locals) => {
      step(ctx);
      return member(obj(row, ctx, locals), name, row, ctx);
    };
  }

  private call(node: Extract<Node, { t: 'call' }>): ScopedEv {
    const args = node.args.map((a) => this.value(a));
    const callee = node.callee;
    if (callee.t === 'id') {
      const name = callee.name;
      const fn = GLOBALS.get(name);
      if (!fn)
        return (_row, ctx) => {
          step(ctx);
          throw new EvalError(`unknown function ${name}()`);
        };
      return (row, ctx, locals) => {
        step(ctx);
        return fn(args, row, ctx, locals);
      };
    }
    if (callee.t !== 'member')
      return (_row, ctx) => {
        step(ctx);
        throw new EvalError('only functions and methods can be called');
      };
    const recv = this.scoped(callee.obj);
    const method = methodNamed(callee.name);
    return (row, ctx, locals) => {
      step(ctx);
      const r = recv(row, ctx, locals);
      const self: Value = r instanceof Namespace ? (r.kind === 'this' && r.rec ? new BFile(r.rec) : null) : r;
      return method(self, args, row, ctx, locals);
    };
  }
}

/** A bare name: a lambda's or summary's local, a namespace, or a property of the row's note. */
function identifier(name: string): ScopedEv {
  const own = (row: Row, ctx: EvalContext): Scoped => {
    switch (name) {
      case 'file':
        return new BFile(row.rec);
      case 'note':
        return new Namespace('note', row.rec);
      case 'formula':
        return new Namespace('formula', row.rec);
      case 'this':
        return new Namespace('this', ctx.thisRec);
      default:
        return rowProperty(row, name, ctx);
    }
  };
  if (!LOCAL_NAMES.has(name))
    return (row, ctx) => {
      step(ctx);
      return own(row, ctx);
    };
  return (row, ctx, locals?: Locals) => {
    step(ctx);
    if (locals && Object.hasOwn(locals, name)) return locals[name];
    return own(row, ctx);
  };
}

function index(obj: Scoped, idx: Value, row: Row, ctx: EvalContext): Scoped {
  if (obj instanceof Namespace || isObject(obj as Value) || obj instanceof BFile) {
    if (typeof idx !== 'string') throw new EvalError('a property name in [] must be a string');
    return member(obj, idx, row, ctx);
  }
  if (Array.isArray(obj) || typeof obj === 'string') {
    if (typeof idx !== 'number' || !Number.isInteger(idx)) throw new EvalError('a list index must be an integer');
    const i = idx < 0 ? obj.length + idx : idx;
    return (obj as Value[] | string)[i] ?? null;
  }
  if (obj === null) return null;
  throw new EvalError(`a ${typeOf(obj as Value)} cannot be indexed`);
}
