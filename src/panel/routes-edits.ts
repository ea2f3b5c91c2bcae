// Agent edits: the change feed filtered to agents' changes (get_changes by: agents), each note's kept
// revisions with their diffs, and — when the history family serves — restore and undo with a preview.
// Every read and write here is a tool call through the host's dispatcher as the signed-in user's
// principal: the same tools, admission, validation and audit an agent's call gets.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isInputNeeded } from '../sdk/client-channel.js';
import { refusalOfToolResult, refusalPanelText } from '../host/refusal-presenter.js';
import { html, type Html } from './html.js';
import { csrfField, page, type Frame } from './layout.js';
import { first, me, PanelError, type Form, type PanelContext } from './context.js';
import type { PanelUser } from '../host/auth/panel-sessions.js';
import { usersListOp } from '../host/admin/account-operations.js';
import { userByName } from '../host/auth/users.js';

/** A tool's structured result, or a PanelError carrying the refusal as the refusal presenter words it for a page. */
export async function callAs(
  ctx: PanelContext,
  request: FastifyRequest,
  tool: string,
  args: Record<string, unknown>,
  subject: PanelUser = me(request),
): Promise<Record<string, any>> {
  const result = await ctx.callTool(ctx.principalOf(subject), tool, args);
  if (isInputNeeded(result)) throw new PanelError(400, `${tool} asked for input the panel cannot give.`);
  const refusal = refusalOfToolResult(result);
  if (refusal) {
    const { status, text } = refusalPanelText(refusal);
    throw new PanelError(status, text || `${tool} failed.`);
  }
  if (result.isError || !result.structuredContent) throw new PanelError(400, `${tool} gave no structured result.`);
  return result.structuredContent as Record<string, any>;
}

export function diffBlock(diff: string | undefined, label: string): Html {
  if (!diff) return html`<p class="muted">No textual difference.</p>`;
  const lines = diff
    .split('\n')
    .filter((l) => !/^=+$/.test(l))
    .map(
      (l) =>
        html`<span class="${l.startsWith('+') && !l.startsWith('+++') ? 'add' : l.startsWith('-') && !l.startsWith('---') ? 'del' : ''}">${l}</span>\n`,
    );
  return html`<pre class="diff" aria-label="${label}">${lines}</pre>`;
}

/** The tools whose revisions put a note back as it was (an undo of the change they revert). */
const REVERTING_TOOLS = new Set(['undo_changes', 'restore_revision']);

/**
 * The later revision that undid revision `i` of a newest-first list, if any: an undo or restore that put
 * back the content this change replaced (or deleted the note this change created). An undone edit is
 * marked on the page so it does not look as if it still stood.
 */
export function undoneBy(revisions: ReadonlyArray<Record<string, any>>, i: number): Record<string, any> | undefined {
  const r = revisions[i];
  if (!r || REVERTING_TOOLS.has(String(r.tool))) return undefined;
  for (let j = i - 1; j >= 0; j--) {
    const later = revisions[j];
    if (!REVERTING_TOOLS.has(String(later.tool))) continue;
    if (r.previous_hash ? later.content_hash === r.previous_hash : r.kind === 'create' && later.kind === 'delete')
      return later;
  }
  return undefined;
}

export function registerEdits(panel: FastifyInstance, ctx: PanelContext): void {
  const hasHistory = () => ctx.registry.findTool('restore_revision') !== undefined;

  panel.get('/edits', async (request, reply) => {
    const q = request.query as Record<string, string | undefined>;
    const since =
      q.since && /^[0-9TZ:.+-]{10,40}$|^ev:\d+$/.test(q.since)
        ? q.since
        : new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10);
    // An admin without ?user= sees every vault's agent changes (one user per vault reads its feed);
    // ?user=NAME narrows to that user's vault, as on the other pages.
    const user = me(request);
    const subject = await ctx.userOf(request);
    const everyVault = user.admin && subject === user;
    const listed = everyVault ? await vaultReaders(ctx, user) : [subject];
    // Several processes: a vault's feed is read by the process that owns it (one vault's view is routed
    // there), so the every-vault view lists the vaults owned here and links to the others' own views.
    const here = (r: PanelUser) => !ctx.route || ctx.operations().vaults?.get(r.vaultId)?.state === 'serving';
    const readers = everyVault ? listed.filter(here) : listed;
    const elsewhere = everyVault ? listed.filter((r) => !here(r)) : [];
    const hasFeed = ctx.registry.findTool('get_changes') !== undefined;
    const feeds = hasFeed
      ? await Promise.all(
          readers.map(async (reader) => ({
            reader,
            feed: await callAs(
              ctx,
              request,
              'get_changes',
              { since, by: 'agents', limit: ctx.settings().host.panel.pageSize },
              reader,
            ),
          })),
        )
      : undefined;
    const feed = feeds?.find((f) => f.reader.vaultId === subject.vaultId)?.feed ?? feeds?.[0]?.feed;
    const frame = ctx.frame(request, reply, 'edits');
    const events = (feeds ?? [])
      .flatMap(({ reader, feed: f }) =>
        ((f.events ?? []) as Array<Record<string, any>>).map((e): Record<string, any> & { as: PanelUser } => ({
          ...e,
          vault: reader.vaultName,
          as: reader,
        })),
      )
      .filter((e) => e.kind !== 'gap' && e.kind !== 'reset')
      .sort((a, b) => String(b.at).localeCompare(String(a.at)));
    const asUser = (e: { as: PanelUser }) => (e.as.name === user.name ? '' : `&user=${encodeURIComponent(e.as.name)}`);
    const body = html`${!hasFeed ? html`<p class="muted">The change-feed family is off: there is no feed of agents' changes.</p>` : ''}
${!hasHistory() ? html`<p class="muted">The history family is off: diffs, restore and undo need it.</p>` : ''}
<section aria-labelledby="feed"><h2 id="feed">Changes by agents since ${since} (newest first${everyVault ? ', every vault' : html`, vault ${subject.vaultName}`})</h2>${
      everyVault && listed.length > 1
        ? html`<p>Only one vault: ${listed.map((r, i) => html`${i ? ', ' : ''}<a href="/admin/edits?user=${encodeURIComponent(r.name)}">${r.vaultName}</a>`)}</p>`
        : ''
    }${
      elsewhere.length
        ? html`<p class="muted" id="edits-elsewhere">Owned by another server process, so listed on their own pages: ${elsewhere.map((r, i) => html`${i ? ', ' : ''}<a href="/admin/edits?user=${encodeURIComponent(r.name)}">${r.vaultName}</a>`)}.</p>`
        : ''
    }${
      events.length === 0
        ? html`<p class="muted">No agent changes in this window.</p>`
        : html`<div class="table-wrap"><table><thead><tr><th scope="col">When</th><th scope="col">Vault</th><th scope="col">Change</th><th scope="col">Note</th><th scope="col">By</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${events.map(
            (
              e,
            ) => html`<tr><td>${String(e.at).slice(0, 19).replace('T', ' ')}</td><td>${e.vault}</td><td>${e.kind}${e.from ? html` from ${e.from}` : ''}</td><td><a href="/admin/notes/${encodePath(e.path)}">${e.path}</a></td><td>${e.by_name ?? e.by}</td>
<td>${hasHistory() ? html`<a href="/admin/edits/note?path=${encodeURIComponent(e.path)}${asUser(e)}">Diff and restore</a>` : ''}</td></tr>
${hasHistory() && e.kind !== 'moved' ? html`<tr class="diff-row"><td colspan="6"><details hx-get="/admin/edits/diff?path=${encodeURIComponent(e.path)}&amp;event=${encodeURIComponent(String(e.cursor))}${asUser(e)}" hx-trigger="toggle once" hx-target="find .diff-slot"><summary>Diff of this change</summary><div class="diff-slot"><a href="/admin/edits/note?path=${encodeURIComponent(e.path)}${asUser(e)}">Open the note's revisions and diffs</a></div></details></td></tr>` : ''}`,
          )}</tbody></table></div>`
    }${feed?.more ? html`<p><a href="/admin/edits?since=${encodeURIComponent(String(feed.next_since))}">Older changes were cut; show from ${String(feed.next_since)}</a></p>` : ''}</section>
${hasHistory() ? undoForm(frame) : ''}`;
    return ctx.send(reply, 200, page(frame, 'Agent edits', body));
  });

  // The diff one change-feed event made (an htmx fragment): its revision against the one before it.
  panel.get('/edits/diff', async (request, reply) => {
    const q = request.query as Record<string, string | undefined>;
    if (!hasHistory()) throw new PanelError(404, 'The history family is off.');
    const subject = await ctx.userOf(request);
    const list = await callAs(ctx, request, 'list_revisions', { path: String(q.path ?? ''), limit: 50 }, subject);
    const revisions = list.revisions as Array<Record<string, any>>;
    const i = revisions.findIndex((r) => r.event === q.event);
    const r = revisions[i];
    const before = revisions[i + 1];
    let out = html`<p class="muted">This change kept no diff (its revision was pruned, or the note was created or deleted).</p>`;
    if (r && before?.content_hash && r.content_hash) {
      const d = await callAs(
        ctx,
        request,
        'diff_revisions',
        { path: list.path, from: before.revision, to: r.revision },
        subject,
      );
      out = diffBlock(d.diff as string, `what ${String(r.revision)} changed`);
    } else if (r?.content_hash && !before) {
      out = html`<p class="muted">The note was created by this change.</p>`;
    }
    return ctx.send(reply, 200, out.value);
  });

  panel.get('/edits/note', async (request, reply) => {
    const path = String((request.query as Record<string, string | undefined>).path ?? '');
    if (!hasHistory()) throw new PanelError(404, 'The history family is off.');
    const subject = await ctx.userOf(request);
    const list = await callAs(ctx, request, 'list_revisions', { path, limit: 10 }, subject);
    const revisions = list.revisions as Array<Record<string, any>>;
    // What each change did: the diff from the revision before it (the next, older one) to it.
    const diffs = await Promise.all(
      revisions.map((r, i) => {
        const before = revisions[i + 1];
        return before?.content_hash && r.content_hash && before.content_hash !== r.content_hash
          ? callAs(
              ctx,
              request,
              'diff_revisions',
              { path: list.path, from: before.revision, to: r.revision },
              subject,
            ).catch(() => undefined)
          : Promise.resolve(undefined);
      }),
    );
    const frame = ctx.frame(request, reply, 'edits');
    const body = html`<p>Current version <code>${list.current_hash ?? 'deleted'}</code>. <a href="/admin/notes/${encodePath(String(list.path))}">Read the note</a></p>
${revisions.map(
  (
    r,
    i,
  ) => html`<section aria-labelledby="rev-${r.revision}"${undoneBy(revisions, i) ? html` class="undone"` : ''}><h2 id="rev-${r.revision}">${r.revision}: ${r.kind} at ${String(r.at).slice(0, 19).replace('T', ' ')} by ${r.by_name ?? r.by}${r.client ? html` via ${r.client}` : ''}${r.tool ? html` (${r.tool})` : ''}${undoneBy(revisions, i) ? html` — undone` : ''}</h2>
${undoneBy(revisions, i) ? html`<p class="undone-note">Undone by ${String(undoneBy(revisions, i)!.revision)} (${String(undoneBy(revisions, i)!.tool)}).</p>` : ''}
${diffs[i] ? diffBlock(diffs[i]!.diff, `what ${r.revision} changed`) : html`<p class="muted">${!r.content_hash ? 'No content kept (a deletion).' : i === revisions.length - 1 ? 'The oldest version kept.' : 'No change to the text.'}</p>`}
${r.content_hash === list.current_hash ? html`<p class="muted">This is the note's content now.</p>` : ''}
${r.content_hash && r.content_hash !== list.current_hash ? html`<form method="post" action="/admin/edits/restore">${csrfField(frame)}<input type="hidden" name="path" value="${list.path}"><input type="hidden" name="revision" value="${r.revision}"><input type="hidden" name="expected_hash" value="${list.current_hash ?? ''}"><input type="hidden" name="dry_run" value="true"><button type="submit" class="secondary">Preview restoring ${r.revision}</button></form>` : ''}
</section>`,
)}`;
    return ctx.send(reply, 200, page(frame, `Revisions of ${String(list.path)}`, body));
  });

  panel.post('/edits/restore', async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const dryRun = first(form.dry_run) === 'true';
    const args: Record<string, unknown> = { path: first(form.path), revision: first(form.revision), dry_run: dryRun };
    if (first(form.expected_hash)) args.expected_hash = first(form.expected_hash);
    const out = await callAs(ctx, request, 'restore_revision', args);
    if (!dryRun)
      return ctx.done(
        reply,
        `/admin/edits/note?path=${encodeURIComponent(String(out.path))}`,
        `Restored ${String(out.path)} to ${String(out.revision)}. ${String(out.message ?? '')}`,
      );
    const frame = ctx.frame(request, reply, 'edits');
    const body = html`<p>${String(out.message ?? '')}</p>${diffBlock(out.diff as string | undefined, 'what the restore changes (current → restored)')}
${out.changed ? html`<form method="post" action="/admin/edits/restore">${csrfField(frame)}<input type="hidden" name="path" value="${out.path}"><input type="hidden" name="revision" value="${out.revision}"><input type="hidden" name="expected_hash" value="${first(form.expected_hash)}"><input type="hidden" name="dry_run" value="false"><button type="submit" id="confirm-restore">Restore ${String(out.revision)}</button> <a href="/admin/edits/note?path=${encodeURIComponent(String(out.path))}">Cancel</a></form>` : html`<p>Nothing to restore: the note already has this content.</p>`}`;
    return ctx.send(reply, 200, page(frame, `Restore ${String(out.path)} to ${String(out.revision)}?`, body));
  });

  panel.post('/edits/undo', async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const dryRun = first(form.dry_run) !== 'false';
    const args: Record<string, unknown> = { dry_run: dryRun };
    for (const k of ['since', 'credential'] as const) if (first(form[k]).trim()) args[k] = first(form[k]).trim();
    const out = await callAs(ctx, request, 'undo_changes', args);
    if (!dryRun) return ctx.done(reply, '/admin/edits', String(out.message ?? 'Undone.'));
    const frame = ctx.frame(request, reply, 'edits');
    const reverted = out.reverted as Array<Record<string, any>>;
    const conflicts = out.conflicts as Array<Record<string, any>>;
    const body = html`<p>${String(out.message ?? '')}</p>
${reverted.map((r) => html`<section><h2>${r.action}: ${r.path}</h2>${diffBlock(r.diff as string | undefined, `undo of ${r.path}`)}</section>`)}
${conflicts.length ? html`<section><h2>Not reverted (changed by someone else since)</h2><ul>${conflicts.map((c) => html`<li>${c.path}: ${c.reason}</li>`)}</ul></section>` : ''}
${reverted.length ? html`<form method="post" action="/admin/edits/undo">${csrfField(frame)}${(['since', 'credential'] as const).map((k) => (args[k] ? html`<input type="hidden" name="${k}" value="${String(args[k])}">` : ''))}<input type="hidden" name="dry_run" value="false"><button type="submit" class="danger">Undo these ${String(reverted.length)} change(s)</button> <a href="/admin/edits">Cancel</a></form>` : ''}`;
    return ctx.send(reply, 200, page(frame, 'Undo agent changes?', body));
  });
}

function undoForm(frame: Frame): Html {
  return html`<section aria-labelledby="undo"><h2 id="undo">Undo agents' changes</h2><form method="post" action="/admin/edits/undo">${csrfField(frame)}
<label for="undo-since">Since (ISO date or time, e.g. ${new Date().toISOString().slice(0, 10)})</label><input type="text" id="undo-since" name="since" required>
<label for="undo-credential">Only this credential (its name or id; empty: every agent)</label><input type="text" id="undo-credential" name="credential">
<input type="hidden" name="dry_run" value="true"><button type="submit" class="secondary">Preview the undo</button></form></section>`;
}

/** A vault path as a URL path under /admin/notes/ (each segment encoded). */
export function encodePath(p: string): string {
  return p.split('/').map(encodeURIComponent).join('/');
}

/** One active user per vault (the admin for their own), whose principal reads that vault's feed. */
async function vaultReaders(ctx: PanelContext, admin: PanelUser): Promise<PanelUser[]> {
  const readers = new Map<string, PanelUser>([[admin.vaultName, admin]]);
  for (const u of await usersListOp(ctx.operations())) {
    if (u.state !== 'active' || !u.vault || readers.has(u.vault)) continue;
    const row = await userByName(ctx.db, u.name);
    if (!row || row.vaultId === null) continue;
    readers.set(u.vault, {
      id: row.id,
      name: row.name,
      admin: row.isAdmin,
      vaultId: row.vaultId,
      vaultName: row.vaultName ?? u.vault,
    });
  }
  return [...readers.values()];
}
