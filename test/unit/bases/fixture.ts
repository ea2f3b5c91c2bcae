// A small in-memory vault for the bases engine's unit tests: records, a lookup with links, and a runner that
// answers one base (YAML) at a fixed clock. Pure; no server.
import { buildLinkIndex, resolveLink } from '../../../src/markdown/index.js';
import { parseBase } from '../../../plugins/bases/base-file.js';
import { compileView, runView, type EngineLimits, type ViewResult } from '../../../plugins/bases/engine.js';
import type { VaultLookup } from '../../../plugins/bases/expr/runtime.js';
import { BLink, type FileRecord, recordMemo } from '../../../plugins/bases/expr/values.js';

export const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);

export const LIMITS: EngineLimits = {
  maxChars: 4000,
  maxDepth: 64,
  maxNodes: 2000,
  maxFormulas: 200,
  maxWorkSteps: 5_000_000,
  maxStringChars: 100_000,
};

export interface FakeNote {
  path: string;
  props?: Record<string, unknown>;
  tags?: string[];
  links?: string[];
  embeds?: string[];
  size?: number;
  mtime?: string;
}

export function vault(notes: FakeNote[], types: Record<string, string> = {}) {
  const records: FileRecord[] = notes.map((n) => ({
    path: n.path,
    size: n.size ?? 100,
    mtimeMs: n.mtime ? Date.parse(n.mtime) : NOW - 86_400_000,
    ctimeMs: n.mtime ? Date.parse(n.mtime) : NOW - 2 * 86_400_000,
    tags: n.tags ?? [],
    properties: n.path.endsWith('.md') ? (n.props ?? null) : null,
    isNote: n.path.endsWith('.md'),
  }));
  const byPath = new Map(records.map((r) => [r.path, r]));
  const index = buildLinkIndex(byPath.keys());
  const resolve = (t: string, from: string) => {
    const r = resolveLink(t, from, index);
    return r.resolved ?? (r.ambiguous ? r.candidates[0] : null);
  };
  const out = new Map<string, BLink[]>();
  const emb = new Map<string, BLink[]>();
  const back = new Map<string, BLink[]>();
  for (const n of notes) {
    for (const [list, map] of [
      [n.links ?? [], out],
      [n.embeds ?? [], emb],
    ] as const) {
      for (const t of list) {
        const r = resolve(t, n.path);
        map.set(n.path, [...(map.get(n.path) ?? []), new BLink(t, null, r)]);
        if (r && r !== n.path && !(back.get(r) ?? []).some((b) => b.resolved === n.path))
          back.set(r, [...(back.get(r) ?? []), new BLink(n.path, null, n.path)]);
      }
    }
  }
  const memoKey = {};
  const lookup: VaultLookup = {
    file: (p) => byPath.get(p),
    resolve,
    links: (r) => out.get(r.path) ?? [],
    embeds: (r) => emb.get(r.path) ?? [],
    backlinks: (r) => back.get(r.path) ?? [],
    propertyType: (n) => types[n],
    ctime: (r) => r.ctimeMs,
    // As the server's lookup: converted property values kept per record across this vault's queries.
    memo: (r) => recordMemo(r, memoKey),
  };
  return {
    records,
    lookup,
    async query(
      yaml: string,
      o: { view?: string; this?: string; limits?: Partial<EngineLimits>; offset?: number; pageSize?: number } = {},
    ): Promise<ViewResult> {
      const limits = { ...LIMITS, ...o.limits };
      const cv = compileView(parseBase(yaml, 1 << 20), o.view, limits);
      return runView(cv, {
        records,
        vault: lookup,
        nowMs: NOW,
        thisRec: o.this ? (byPath.get(o.this) ?? null) : null,
        limits,
        offset: o.offset ?? 0,
        pageSize: o.pageSize ?? 1000,
      });
    },
  };
}

/** The paths a base answers, in order. */
export async function paths(
  v: ReturnType<typeof vault>,
  yaml: string,
  o?: Parameters<ReturnType<typeof vault>['query']>[1],
) {
  return (await v.query(yaml, o)).rows.map((r) => r.path);
}

/** Filter-only base: the paths matching one expression. */
export function where(expr: string): string {
  return `filters: ${JSON.stringify(expr)}\nviews:\n  - type: table\n    name: T\n    order: [file.name]\n    sort: [{property: file.path, direction: ASC}]\n`;
}

/** One formula's value on one note, as a cell. */
export async function formula(v: ReturnType<typeof vault>, path: string, expr: string, opts: { this?: string } = {}) {
  const r = await v.query(
    `filters: ${JSON.stringify(`file.path == ${JSON.stringify(path)}`)}\nformulas:\n  f: ${JSON.stringify(expr)}\nviews:\n  - type: table\n    name: T\n    order: [formula.f]\n`,
    opts,
  );
  return r.rows[0]?.cells['formula.f'];
}
