// The note view's renderer: what Obsidian shows, safely. Wikilinks ([[Note]], [[Note|alias]],
// [[Note#Heading]]) become links to /admin/notes/<resolved path> through the one link resolver
// (src/markdown resolveLink) over the vault's notes table, embeds (![[x]]) become links, task items
// (- [ ] / - [x]) disabled checkboxes, headings get ids for #Heading links. The markdown itself goes
// through micromark's safe defaults (raw HTML escaped, javascript: and other dangerous protocols
// dropped); every piece added here is built with the escaping `html` helper, and every href starts
// with /admin/notes/.
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { micromark } from 'micromark';
import { buildLinkIndex, parseNote, resolveLink, type Link } from '../markdown/index.js';
import { textArray } from '../sdk/query/index.js';
import { html } from './html.js';

/** Resolves link targets written in `fromPath` to vault paths (null: dangling or ambiguous). */
export type TargetResolver = (targets: readonly string[], fromPath: string) => Promise<Map<string, string | null>>;

/**
 * Resolution over the notes table of one vault: only the notes whose file name a target could mean, by
 * the notes_vault_name_lower index (migration 0009; the expression must stay the same).
 */
export function notesResolver(db: Kysely<any>, vaultId: number): TargetResolver {
  return async (targets, fromPath) => {
    const names = new Set<string>();
    for (const t of targets) {
      const last = t.trim().replace(/\\/g, '/').split('/').pop()!.toLowerCase();
      if (last) names.add(last).add(`${last}.md`);
    }
    const out = new Map<string, string | null>();
    const rows = names.size
      ? (
          await sql<{ path: string }>`SELECT path FROM notes WHERE vault_id = ${vaultId}
          AND lower(regexp_replace(path, '^.*/', '')) = ANY(${textArray([...names])}) LIMIT 5000`.execute(db)
        ).rows
      : [];
    const index = buildLinkIndex(rows.map((r) => r.path));
    for (const t of targets) out.set(t, resolveLink(t, fromPath, index).resolved);
    return out;
  };
}

/** A heading's or link anchor's id: lower case, runs of anything but letters and digits as one `-`. */
export function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, '-')
      .replace(/^-|-$/g, '') || 'section'
  );
}

function notePath(p: string): string {
  return `/admin/notes/${p.split('/').map(encodeURIComponent).join('/')}`;
}

/** Longest source the note view hands micromark in one piece (the note parser segments; this view cannot). */
export const PANEL_MARKDOWN_MAX_CHARS = 512 * 1024;
const untrusted = (problem: string): boolean => problem.endsWith('parsed with the line scanner');

export async function renderNote(content: string, path: string, resolve: TargetResolver): Promise<string> {
  const model = parseNote(content, { path });
  const links = model.links.filter((l) => l.kind !== 'markdown' && !l.inFrontmatter).sort((a, b) => a.start - b.start);
  // Each wikilink's bytes become a placeholder micromark passes through as a word; then the link's markup.
  const nonce = `exo${randomBytes(6).toString('hex')}`;
  const bytes = Buffer.from(content, 'utf8');
  let source = '';
  let at = 0;
  const kept: Link[] = [];
  for (const l of links) {
    if (l.start < at || l.end > bytes.length) continue;
    source += `${bytes.subarray(at, l.start).toString('utf8')}${nonce}n${kept.length}z`;
    kept.push(l);
    at = l.end;
  }
  source += bytes.subarray(at).toString('utf8');
  // micromark is super-linear on some inputs (deep list nesting, long opener runs: `- - - …` 20,000 deep in a
  // frontmatter block never returned; issue 35). What the note parser would not give micromark, the panel
  // does not either: the note is shown as escaped text. The frontmatter is markdown here too, so the check
  // covers the whole source (the leading newline keeps it from being read as a frontmatter block).
  if (source.length > PANEL_MARKDOWN_MAX_CHARS || parseNote(`\n${source}`, { path }).problems.some(untrusted))
    return html`<pre class="note-text">${content}</pre>`.value;
  const resolved = await resolve([...new Set(kept.map((l) => l.target))], path);
  const placeholder = new RegExp(`${nonce}n(\\d+)z`, 'g');
  const linkText = (l: Link) => l.alias ?? `${l.target || ''}${l.anchor ? `${l.target ? ' > ' : ''}${l.anchor}` : ''}`;
  // Markup goes into text nodes only: a placeholder inside a tag (an image's alt, a link's href or title)
  // becomes the link's text, escaped, so no markup can land inside an attribute (issue 35).
  let out = micromark(source, { allowDangerousHtml: false, allowDangerousProtocol: false })
    .split(/(<[^>]*>)/)
    .map((part) =>
      part.startsWith('<')
        ? part.replace(placeholder, (_, i: string) => html`${linkText(kept[Number(i)])}`.value)
        : part.replace(placeholder, (_, i: string) => wikilinkMarkup(kept[Number(i)])),
    )
    .join('');
  function wikilinkMarkup(l: Link): string {
    const to = l.target === '' ? path : resolved.get(l.target);
    const text = linkText(l);
    const cls = l.embed ? 'wikilink embed' : 'wikilink';
    if (!to)
      return html`<span class="${cls} dangling" title="No note matches this link">${l.embed ? 'Embedded: ' : ''}${text}</span>`
        .value;
    const href = `${notePath(to)}${l.anchor ? `#${slug(l.anchor)}` : ''}`;
    return html`<a class="${cls}" href="${href}">${l.embed ? 'Embedded: ' : ''}${text}</a>`.value;
  }
  // Headings get ids (for [[Note#Heading]]); task items a disabled checkbox in place of `[ ]` / `[x]`.
  out = out.replace(/<h([1-6])>([\s\S]*?)<\/h\1>/g, (_, n: string, inner: string) => {
    const text = inner.replace(/<[^>]*>/g, '').replace(/&[a-z#0-9]+;/gi, ' ');
    return `<h${n} id="${slug(text)}">${inner}</h${n}>`;
  });
  out = out.replace(
    /<li>(\s*<p>)?\[([ xX])\] /g,
    (_, p: string | undefined, mark: string) =>
      `<li class="task">${p ?? ''}<input type="checkbox" disabled${mark === ' ' ? '' : ' checked'} aria-label="${mark === ' ' ? 'to do' : 'done'}"> `,
  );
  return out;
}
