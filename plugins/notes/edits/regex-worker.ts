// Regular-expression replace for replace_in_note, self-contained (its source is shipped to a throwaway
// thread by lib/regex-runner.ts): no imports, no closures, no I/O, or it cannot run there.
export interface RegexReplacePayload {
  text: string;
  pattern: string;
  flags: string;
  replacement: string;
  max: number;
}
export interface RegexReplaceResult {
  text: string;
  count: number;
}

export function regexReplace(p: RegexReplacePayload): RegexReplaceResult {
  const re = new RegExp(p.pattern, p.flags.includes('g') ? p.flags : `${p.flags}g`);
  let count = 0;
  const text = p.text.replace(re, (...args: unknown[]) => {
    if (p.max > 0 && count >= p.max) return String(args[0]);
    count++;
    // Expand $1, $<name>, $& and $$ the way String.prototype.replace does for one match.
    const groups =
      typeof args[args.length - 1] === 'object'
        ? (args[args.length - 1] as Record<string, string> | undefined)
        : undefined;
    const nums = args.slice(1, groups ? -3 : -2) as Array<string | undefined>;
    return p.replacement.replace(/\$(\$|&|\d{1,2}|<[^>]+>)/g, (whole, k: string) => {
      if (k === '$') return '$';
      if (k === '&') return String(args[0]);
      if (k.startsWith('<')) return groups?.[k.slice(1, -1)] ?? '';
      const i = Number(k);
      return i >= 1 && i <= nums.length ? (nums[i - 1] ?? '') : whole;
    });
  });
  return { text, count };
}
