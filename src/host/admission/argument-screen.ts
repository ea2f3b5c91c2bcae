// Argument screens run before any schema validation: arguments nested past a bound, and strings no tool can
// store or name (NUL, lone UTF-16 surrogates), are refused as invalid_arguments. Iterative by design: a
// 50,000-deep document must not reach a recursive validator, clone or serializer.
import { Refusal } from '../../sdk/refusals.js';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function stringProblem(s: string): string | undefined {
  if (s.includes('\0')) return 'contains a NUL character';
  if (LONE_SURROGATE.test(s)) return 'contains a lone UTF-16 surrogate (not valid Unicode text)';
  return undefined;
}

/** The refusal for `args`, or undefined when they pass. `maxDepth` counts containers below the arguments object. */
export function screenArguments(args: unknown, maxDepth: number): Refusal | undefined {
  const stack: Array<{ v: unknown; depth: number; at: string }> = [{ v: args, depth: 0, at: 'arguments' }];
  while (stack.length) {
    const { v, depth, at } = stack.pop()!;
    if (typeof v === 'string') {
      const problem = stringProblem(v);
      if (problem) return new Refusal('invalid_arguments', { problems: `${at} ${problem}` });
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (depth > maxDepth)
      return new Refusal('invalid_arguments', {
        problems: `arguments nest deeper than ${maxDepth} levels (admission.maxArgumentDepth)`,
      });
    const top = depth === 0;
    for (const [k, child] of Object.entries(v)) {
      const problem = stringProblem(k);
      if (problem) return new Refusal('invalid_arguments', { problems: `an argument name ${problem}` });
      stack.push({ v: child, depth: depth + 1, at: top ? k.slice(0, 64) : at });
    }
  }
  return undefined;
}
