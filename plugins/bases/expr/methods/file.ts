// Methods of files and links (`hasTag` with nested tags, `inFolder` with subfolders, `hasLink`, `hasProperty`…).
// A link reads the file it resolves to (the project's resolver); one that does not resolve has no tags or links.
import { argValue, type EvalContext, step } from '../runtime.js';
import { BFile, BLink, display, type FileRecord, type Value } from '../values.js';
import type { Method, MethodTable } from './types.js';

type FileOrLink = BFile | BLink;

function target(self: FileOrLink, ctx: EvalContext): FileRecord | undefined {
  return self instanceof BFile ? self.rec : self.resolved ? ctx.vault.file(self.resolved) : undefined;
}

function tagKey(t: string): string {
  return t.replace(/^#/, '').toLowerCase();
}

/** Whether the tag is `w` or nested under it (`w/…`). */
function tagWithin(tag: string, w: string): boolean {
  if (tag.length === w.length) return tag === w;
  return tag.length > w.length && tag.charCodeAt(w.length) === 47 /* / */ && tag.startsWith(w);
}

function folderOf(v: Value): string {
  const s = v instanceof BFile ? v.rec.path : v instanceof BLink ? (v.resolved ?? v.target) : display(v);
  return s.replace(/^\/+|\/+$/g, '');
}

function linkPath(v: Value, from: string, ctx: EvalContext): string | null {
  if (v instanceof BFile) return v.rec.path;
  if (v instanceof BLink) return v.resolved;
  if (typeof v === 'string') return ctx.vault.resolve(v.replace(/^\[\[|\]\]$/g, ''), from);
  return null;
}

const linksTo: Method<FileOrLink> = (self, a, row, ctx, l) => {
  const rec = target(self, ctx);
  if (!rec) return false;
  const path = linkPath(argValue(a, 0, row, ctx, l), row.rec.path, ctx);
  // Embeds count: Obsidian's resolved links hold both.
  const links = [...ctx.vault.links(rec), ...ctx.vault.embeds(rec)];
  step(ctx, links.length);
  return path !== null && links.some((x) => x.resolved === path);
};

export const FILE_METHODS: MethodTable<FileOrLink> = new Map<string, Method<FileOrLink>>([
  [
    'asFile',
    (self, _a, _row, ctx) => {
      const rec = target(self, ctx);
      return rec ? new BFile(rec) : null;
    },
  ],
  [
    'asLink',
    (self, a, row, ctx, l) =>
      self instanceof BLink
        ? self
        : new BLink(self.rec.path, a.length ? display(argValue(a, 0, row, ctx, l)) : null, self.rec.path),
  ],
  ['linksTo', linksTo],
  ['hasLink', linksTo],
  [
    'hasProperty',
    (self, a, row, ctx, l) => {
      const rec = target(self, ctx);
      return !!rec?.properties && Object.hasOwn(rec.properties, display(argValue(a, 0, row, ctx, l)));
    },
  ],
  [
    'hasTag',
    (self, a, row, ctx, l) => {
      const rec = target(self, ctx);
      if (!rec) return false;
      const wanted = a.map((ev) => tagKey(display(ev(row, ctx, l))));
      for (const tag of rec.tags) for (const w of wanted) if (tagWithin(tag, w)) return true;
      return false;
    },
  ],
  [
    'inFolder',
    (self, a, row, ctx, l) => {
      const rec = target(self, ctx);
      if (!rec) return false;
      const folder = folderOf(argValue(a, 0, row, ctx, l));
      return folder === '' || rec.path.startsWith(`${folder}/`);
    },
  ],
]);
