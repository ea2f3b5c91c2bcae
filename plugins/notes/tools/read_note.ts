// read_note: one note as structured data (content windows, section reads, outline, metadata budgets).
// Read-only; never writes and never returns more than the read budgets allow.
import { baseBlocks, filterLinks, type Link } from '../../../src/markdown/index.js';
import { defineTool, resolveNotePath } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { tokenCount } from '../lib/tokens.js';
import { bodyStartByte, deepLink, loadNote, sliceBytes, tagList } from '../lib/note-io.js';
import { budgetMetadata, budgetOutline, lfNormalise, windowContent } from '../lib/read-window.js';
import { sectionOrRefuse } from '../edits/sections.js';

type ReadNoteInput = NotesTools['read_note']['input'];

type ReadNoteOutput = NotesTools['read_note']['output'];

export async function readNote(input: ReadNoteInput, ctx: NotesCtx): Promise<ReadNoteOutput> {
  const path = await resolveNotePath(ctx, input.path);
  const offset = input.offset ?? 0;
  const max = ctx.settings.notes.read.maxChars;
  const budget = Math.min(input.limit ?? max, max);
  // Only what this tool reads crosses back from a worker parse (a huge note's tasks and links never do).
  const note = await loadNote(ctx, path, {
    fields: ['title', 'tags', 'frontmatter', 'outline', 'links'],
    distinctTags: true,
    linkFilter: BASE_EMBEDS,
  });
  const m = note.model;
  let body: string;
  let heading: string | undefined;
  if (input.section !== undefined) {
    const h = sectionOrRefuse(note, input.section);
    heading = sliceBytes(note.bytes, h.start, h.end);
    body = sliceBytes(note.bytes, h.bodyStart, h.bodyEnd);
  } else {
    body = sliceBytes(note.bytes, bodyStartByte(note));
  }
  const win = windowContent(body, offset, budget);
  const omissions: string[] = [];
  let fmView: Record<string, unknown> | undefined;
  if (m.frontmatter.present && m.frontmatter.data) fmView = m.frontmatter.data;
  else if (m.frontmatter.error)
    omissions.push(
      `frontmatter: no JSON view (${m.frontmatter.error.message.slice(0, 160)}); frontmatter_yaml is the raw block`,
    );
  const { meta, omissions: dropped } = budgetMetadata(
    {
      title: m.title,
      tags: tagList(m),
      frontmatter_yaml: m.frontmatter.present ? lfNormalise(m.frontmatter.text) : '',
      frontmatter: fmView,
      heading,
    },
    max,
  );
  omissions.push(...dropped);
  const out: ReadNoteOutput = {
    path,
    content_hash: note.hash,
    ...meta,
    ...win,
    token_estimate: await tokenCount(ctx, win.content),
  };
  if (win.truncated && input.section === undefined && m.outline.length > 0) {
    const o = budgetOutline(m.outline, budget);
    out.outline = o.entries;
    if (o.omitted > 0) out.outline_omitted = o.omitted;
  }
  if (win.next_offset !== undefined) {
    out.notice = `Showing chars ${win.offset}–${win.next_offset} of ${win.total_chars}. Continue with read_note(path=${JSON.stringify(path)}${input.section !== undefined ? `, section=${JSON.stringify(input.section)}` : ''}, offset=${win.next_offset})${input.section === undefined && m.outline.length > 0 ? ', or read one section by its #N ordinal' : ''}.`;
  }
  if (m.frontmatter.error) out.frontmatter_error = { ...m.frontmatter.error };
  if (omissions.length > 0) out.metadata_omissions = omissions;
  const bases = await baseReferences(ctx, path, note);
  if (bases.length > 0) out.bases = bases;
  const link = deepLink(ctx, path);
  if (link) out.deep_link = link;
  return out;
}

/** Base references read_note reports at most (each embed costs one or two existence checks). */
const MAX_BASE_REFERENCES = 20;

/** The only links read_note reads: embeds of a .base file (a huge note's other links stay in the worker). */
const BASE_EMBEDS = { embedsOnly: true, targetSuffix: '.base', max: MAX_BASE_REFERENCES } as const;

type BaseReference = NonNullable<ReadNoteOutput['bases']>[number];

/**
 * The Obsidian bases a note shows, as query_base arguments: its ```base blocks (by ordinal) and its embeds of a
 * .base file (`![[x.base#View]]`: the file found beside the note or by its vault path, the view from the anchor).
 */
async function baseReferences(
  ctx: NotesCtx,
  path: string,
  note: { bytes: Buffer; text: string; model: { links: readonly Link[] } },
): Promise<BaseReference[]> {
  const out: BaseReference[] = [];
  const text = sliceBytes(note.bytes, 0);
  if (text.includes('base')) {
    baseBlocks(text).forEach((b, i) => {
      out.push({ kind: 'block', line: b.line, query: { path, block: i + 1 } });
    });
  }
  const folder = path.includes('/') ? path.slice(0, path.lastIndexOf('/') + 1) : '';
  // Embeds come from the note's links (for a note parsed in a worker, only its .base embeds crossed back).
  for (const l of filterLinks(note.model.links, BASE_EMBEDS)) {
    if (out.length >= MAX_BASE_REFERENCES) break;
    let found: string | undefined;
    for (const candidate of [...new Set([folder + l.target, l.target])])
      if (await ctx.vault.fs.exists(candidate)) {
        found = candidate;
        break;
      }
    out.push({
      kind: 'embed',
      line: l.line,
      target: l.target,
      query: { ...(found !== undefined ? { path: found } : {}), ...(l.anchor ? { view: l.anchor } : {}) },
    });
  }
  return out.slice(0, MAX_BASE_REFERENCES);
}

export function renderReadNote(o: ReadNoteOutput): string {
  const lines = [`path: ${o.path}`, `content_hash: ${o.content_hash}`];
  if (o.title !== undefined) lines.push(`title: ${o.title}`);
  if (o.tags && o.tags.length > 0) lines.push(`tags: ${o.tags.join(', ')}`);
  if (o.deep_link) lines.push(`open: ${o.deep_link}`);
  if (o.frontmatter_yaml) lines.push('frontmatter:', '---', o.frontmatter_yaml.replace(/\n$/, ''), '---');
  for (const om of o.metadata_omissions ?? []) lines.push(`(omitted) ${om}`);
  if (o.heading !== undefined) lines.push(`section: ${o.heading}`);
  lines.push(
    `chars ${o.offset}–${o.offset + o.content.length} of ${o.total_chars}${o.truncated ? ' (truncated)' : ''}, ~${o.token_estimate} tokens`,
    '',
    o.content,
  );
  if (o.outline) {
    lines.push('', 'outline:');
    for (const e of o.outline) lines.push(`${'  '.repeat(e.depth - 1)}${e.ordinal} ${e.text} (${e.size} B)`);
    if (o.outline_omitted) lines.push(`… ${o.outline_omitted} more headings`);
  }
  if (o.bases) {
    lines.push('', 'bases (answer with query_base):');
    for (const b of o.bases) {
      const args = Object.entries(b.query)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(', ');
      lines.push(
        `- line ${b.line}: ${b.kind === 'block' ? '```base block' : `![[${b.target}]]`} → ${b.query.path === undefined ? `(${b.target} not found beside the note or at that vault path) ` : ''}query_base(${args})`,
      );
    }
  }
  if (o.notice) lines.push('', o.notice);
  return lines.join('\n');
}

export default defineTool<NotesTools['read_note']>({
  handler: readNote,
  render: renderReadNote,
  // Over the result budget the window narrows; next_offset (with the same section) continues it.
  paging: {
    limit: 'limit',
    size: (o) => o.content.length,
    next: (input, o) => (o.next_offset === undefined ? undefined : { ...input, offset: o.next_offset }),
  },
});
