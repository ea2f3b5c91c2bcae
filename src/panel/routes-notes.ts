// The read-only note view (/admin/notes/<path>) for the signed-in owner of the vault: the note is read
// with the notes family's read_note as the user's principal and rendered by note-render.ts: micromark with
// its safe defaults (raw HTML escaped, javascript: and other dangerous link protocols dropped), wikilinks
// and embeds as links to the notes they resolve to, tasks as disabled checkboxes. A note cannot inject
// markup or script into the panel. This is the page search/fetch results link to over https.
import type { FastifyInstance } from 'fastify';
import { html, raw } from './html.js';
import { page } from './layout.js';
import { callAs } from './routes-edits.js';
import { me, PanelError, type PanelContext } from './context.js';
import { notesResolver, renderNote } from './note-render.js';

export function registerNotes(panel: FastifyInstance, ctx: PanelContext): void {
  panel.get('/notes/*', async (request, reply) => {
    const path = String((request.params as Record<string, string>)['*'] ?? '');
    if (!path) throw new PanelError(404, 'Which note? The address names none.');
    const note = await callAs(ctx, request, 'read_note', { path });
    const rendered = await renderNote(
      String(note.content ?? ''),
      String(note.path),
      notesResolver(ctx.db, me(request).vaultId),
    );
    const frame = ctx.frame(request, reply);
    const tags = (note.tags ?? []) as string[];
    const body = html`<p class="muted">${String(note.path)}${tags.length ? html` · ${tags.map((t) => `#${t}`).join(' ')}` : ''}${note.truncated ? ' · cut: this view shows the start of the note' : ''}</p>
${note.frontmatter_yaml ? html`<details><summary>Frontmatter</summary><pre>${String(note.frontmatter_yaml)}</pre></details>` : ''}
<article class="note-body card">${raw(rendered)}</article>`;
    return ctx.send(reply, 200, page(frame, String(note.title ?? note.path), body));
  });
}
