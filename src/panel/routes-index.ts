// Index and search: re-index a vault (the CLI's `exocortex index` operation), rebuild the keyword index
// and re-embed (the search family's own commands, as `exocortex search …` runs them), with live progress
// (htmx polls a fragment; without JS the page offers a refresh link); and the queries agents ran that
// found nothing, from the audit log. Everyone acts on their own vault; admins pick any served vault (and
// the search commands for every vault at once, as the CLI runs them), and run any serving family's command
// (`exocortex <family> <command> [args]`) as a job. Several processes: a re-index of a vault another
// process owns runs at that owner (its pipeline), its progress streamed back into this process's job.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import {
  familyCommandOp,
  indexOp,
  renderIndexSummary,
  type IndexSummary,
  type Progress,
} from '../host/admin/operations.js';
import { html, type Html } from './html.js';
import { csrfField, page } from './layout.js';
import { PanelJobs, type Job } from './jobs.js';
import { first, me, PanelError, requireAdmin, type Form, type PanelContext } from './context.js';
import type { PanelUser } from '../host/auth/panel-sessions.js';
import type { ServedVault } from '../host/vaults/registry.js';

const EVERY_VAULT = '*';

/**
 * The vault a form names (`vault`): a non-admin's own only; an admin's any served vault, or (where
 * `every` allows) every vault at once (undefined). Without the field: the user's own vault. `needs`: what
 * the job uses of it here: its index (a re-index: where another process owns the vault, the job runs
 * there), or only its handle (a search command, which acts on the shared database).
 */
function chosenVault(
  ctx: PanelContext,
  user: PanelUser,
  form: Form,
  needs: 'index' | 'handle',
  every = false,
): ServedVault | undefined {
  const name = first(form.vault) || user.vaultName;
  if (name === EVERY_VAULT && every && user.admin) return undefined;
  if (name !== user.vaultName && !user.admin)
    throw new PanelError(403, `Only administrators act on other vaults than yours (${user.vaultName}).`);
  const v = ctx
    .operations()
    .vaults?.all()
    .find((x) => x.row.name === name);
  const usable = needs === 'index' ? v?.index || (v && ctx.atOwner) : v?.handle;
  if (!v || !usable) throw new PanelError(409, `The vault ${name} is not being served now; see the overview.`);
  return v;
}

/**
 * Re-index a vault: with its pipeline here, or (several processes) at the process that owns it, whose
 * progress and summary stream back over a signed operator hop (the owner answers /v1/index only for one).
 */
async function reindex(
  ctx: PanelContext,
  vault: ServedVault,
  rebuild: boolean,
  progress: (done: number, total: number) => void,
): Promise<IndexSummary> {
  const t = ctx.operations();
  const here = () =>
    indexOp({ ...t, vault: vault.handle!, index: vault.index }, { rebuild }, (p) => progress(p.done, p.total));
  if (vault.index || !ctx.atOwner) return here();
  let summary: IndexSummary | undefined;
  let error: string | undefined;
  const ran = await ctx.atOwner(vault.row.id, '/v1/index', { rebuild }, (line) => {
    const p = line.progress as Progress | undefined;
    if (p) progress(p.done, p.total);
    else if ('done' in line) summary = (line.done as { summary?: IndexSummary } | undefined)?.summary;
    else if ('error' in line) error = String((line.error as { message?: unknown } | undefined)?.message ?? line.error);
  });
  // This process took the vault over meanwhile: its pipeline runs here now.
  if (!ran) {
    const now = t.vaults?.get(vault.row.id);
    if (!now?.index || !now.handle)
      throw new Error(`The vault ${vault.row.name} is changing owner; start the job again.`);
    return indexOp({ ...t, vault: now.handle, index: now.index }, { rebuild }, (p) => progress(p.done, p.total));
  }
  if (error !== undefined || !summary) throw new Error(error ?? 'the vault owner gave no summary');
  return summary;
}

/** Every serving family's operator commands (what `exocortex <family> --help` lists). */
function familyCommands(ctx: PanelContext): Array<{ family: string; command: string; description: string }> {
  return [...ctx.registry.generations.values()]
    .flatMap((g) =>
      Object.entries(g.family.commands ?? {}).map(([command, c]) => ({
        family: g.name,
        command,
        description: c.description,
      })),
    )
    .sort((a, b) => `${a.family} ${a.command}`.localeCompare(`${b.family} ${b.command}`));
}

function commandsForm(ctx: PanelContext, frame: { csrf: string }): Html {
  const commands = familyCommands(ctx);
  if (!commands.length) return html``;
  return html`<section aria-labelledby="fc"><h2 id="fc">Family commands</h2><form method="post" action="/admin/index/family-command">${csrfField(frame)}
<p>What <code>exocortex &lt;family&gt; &lt;command&gt;</code> runs, as a job here: every vault, as on the CLI.</p>
<label for="fc-command">Command</label><select id="fc-command" name="command">${commands.map((c) => html`<option value="${c.family} ${c.command}">${c.family} ${c.command}: ${c.description}</option>`)}</select>
<label for="fc-args">Arguments (separated by spaces; most commands take none)</label><input type="text" id="fc-args" name="args">
<button type="submit" class="secondary">Run</button></form></section>`;
}

function vaultPicker(ctx: PanelContext, user: PanelUser, id: string, every: boolean): Html {
  if (!user.admin) return html`<input type="hidden" name="vault" value="${user.vaultName}">`;
  const names = (ctx.operations().vaults?.all() ?? []).map((v) => v.row.name).sort();
  return html`<label for="${id}">Vault</label><select id="${id}" name="vault">${every ? html`<option value="${EVERY_VAULT}">every vault</option>` : ''}${names.map(
    (n) => html`<option value="${n}"${n === user.vaultName && !every ? html` selected` : ''}>${n}</option>`,
  )}</select>`;
}

function jobFragment(job: Job, canSee: boolean): Html {
  if (!canSee) return html``;
  const running = job.state === 'running';
  const poll = running ? html` hx-get="/admin/index/jobs/${job.id}" hx-trigger="every 500ms" hx-swap="outerHTML"` : '';
  return html`<div id="job-${job.id}" class="card job"${poll} aria-live="polite">
<h2>${job.title}</h2><p>Started ${job.startedAt.toISOString().slice(11, 19)} UTC by ${job.user} · <strong class="job-state">${job.state}</strong></p>
${running ? html`<progress max="${String(Math.max(job.total, 1))}" value="${String(job.done)}" aria-label="${job.title} progress">${String(job.done)} of ${String(job.total)}</progress>` : ''}
<pre class="job-message">${job.message}</pre>${running ? html`<p class="muted"><a href="/admin/index/jobs/${job.id}">Refresh</a> (updates itself when JavaScript is on)</p>` : ''}</div>`;
}

export function registerIndexPages(panel: FastifyInstance, ctx: PanelContext): void {
  const jobs = new PanelJobs();
  const hasSearch = () => ctx.registry.generations.has('search');
  const mayView = (request: FastifyRequest, job: Job) => {
    const user = me(request);
    return user.admin || job.user === user.name;
  };

  panel.get('/index', async (request, reply) => {
    const user = me(request);
    const limit = ctx.settings().host.panel.pageSize;
    const since = new Date(Date.now() - 30 * 86_400_000);
    const vaultFilter = user.admin ? sql`` : sql`AND vault_id = ${user.vaultId}`;
    const zero = await sql<{
      tool: string;
      params: string | null;
      n: string;
      last: Date;
    }>`SELECT tool, params, count(*) AS n, max(at) AS last FROM usage_logs WHERE result_count = 0 AND outcome = 'ok' AND at >= ${since} ${vaultFilter} GROUP BY tool, params ORDER BY max(at) DESC LIMIT ${limit}`.execute(
      ctx.db,
    );
    const frame = ctx.frame(request, reply, 'index');
    const visible = jobs.list().filter((j) => mayView(request, j));
    const body = html`<div class="grid">
<section aria-labelledby="ri"><h2 id="ri">Re-index</h2><form method="post" action="/admin/index/reindex">${csrfField(frame)}
<p>Index ${user.admin ? 'a vault' : html`vault <strong>${user.vaultName}</strong>`} again: a catch-up pass, or every note from scratch.</p>${user.admin ? vaultPicker(ctx, user, 'reindex-vault', false) : ''}
<label><input type="checkbox" name="rebuild" value="true"> Every note (rebuild), not only what changed</label>
<button type="submit" id="start-reindex">Start re-index</button></form></section>
${
  hasSearch()
    ? html`<section aria-labelledby="kw"><h2 id="kw">Search indexes</h2>
<form method="post" action="/admin/index/search-command">${csrfField(frame)}<input type="hidden" name="command" value="rebuild-keyword"><p>Recompute every keyword vector (after changing search.ftsConfigs).</p>${vaultPicker(ctx, user, 'kw-vault', true)}<button type="submit">Rebuild keyword index</button></form>
<form method="post" action="/admin/index/search-command">${csrfField(frame)}<input type="hidden" name="command" value="reembed"><p>Queue every note for embedding again, keeping current vectors until new ones land.</p>${vaultPicker(ctx, user, 'embed-vault', true)}<button type="submit" class="secondary">Re-embed every note</button></form></section>`
    : ''
}</div>
${user.admin ? commandsForm(ctx, frame) : ''}
<section aria-labelledby="jobs"><h2 id="jobs">Recent jobs</h2><p class="muted" id="jobs-restart">Jobs run inside the server process started ${new Date(ctx.startedAt).toISOString().slice(0, 16).replace('T', ' ')} UTC: a restart ends a running job and forgets this list. A re-index resumes by itself at start; start a keyword rebuild or re-embed again.</p>${visible.map((j) => jobFragment(j, true))}</section>
<section aria-labelledby="zr"><h2 id="zr">Searches that found nothing (30 days)</h2>${
      zero.rows.length
        ? html`<div class="table-wrap"><table><thead><tr><th scope="col">Tool</th><th scope="col">Arguments</th><th scope="col" class="num">Times</th><th scope="col">Last</th></tr></thead><tbody>${zero.rows.map(
            (z) =>
              html`<tr><td>${z.tool}</td><td><code>${z.params ?? ''}</code></td><td class="num">${String(z.n)}</td><td>${new Date(z.last).toISOString().slice(0, 16).replace('T', ' ')}</td></tr>`,
          )}</tbody></table></div>`
        : html`<p class="muted">None: every search found something.</p>`
    }</section>`;
    return ctx.send(reply, 200, page(frame, 'Index and search', body));
  });

  const showJob = (request: FastifyRequest, reply: FastifyReply, job: Job, status = 200) => {
    if (request.headers['hx-request']) return ctx.send(reply, status, jobFragment(job, true).value);
    const frame = ctx.frame(request, reply, 'index');
    return ctx.send(
      reply,
      status,
      page(
        frame,
        'Index job',
        html`${jobFragment(job, true)}<p><a href="/admin/index">Back to index and search</a></p>`,
      ),
    );
  };

  panel.get('/index/jobs/:id', async (request, reply) => {
    const job = jobs.get((request.params as { id: string }).id);
    if (!job || !mayView(request, job)) throw new PanelError(404, 'No such job (jobs are forgotten on restart).');
    return showJob(request, reply, job);
  });

  panel.post('/index/reindex', async (request, reply) => {
    const user = me(request);
    const form = (request.body ?? {}) as Form;
    const rebuild = first(form.rebuild) === 'true';
    const vault = chosenVault(ctx, user, form, 'index')!;
    const job = jobs.start(`${rebuild ? 'Rebuild' : 'Re-index'} of ${vault.row.name}`, user.name, async (progress) =>
      renderIndexSummary(await reindex(ctx, vault, rebuild, progress)),
    );
    return reply.redirect(`/admin/index/jobs/${job.id}`, 303);
  });

  // Any serving family's operator command, as `exocortex <family> <command> [args]` runs it (admins).
  panel.post('/index/family-command', async (request, reply) => {
    const user = requireAdmin(request);
    const form = (request.body ?? {}) as Form;
    const [family, command] = first(form.command).split(' ');
    if (!familyCommands(ctx).some((c) => c.family === family && c.command === command))
      throw new PanelError(400, 'Unknown family command.');
    const args = first(form.args).trim().split(/\s+/).filter(Boolean).slice(0, 20);
    const job = jobs.start(
      `exocortex ${family} ${command}${args.length ? ` ${args.join(' ')}` : ''}`,
      user.name,
      async () => {
        const lines: string[] = [];
        const code = await familyCommandOp(ctx.operations(), family, command, args, (line) => lines.push(line));
        if (code !== 0) throw new Error(lines.join('\n') || `exit code ${code}`);
        return lines.join('\n') || 'done';
      },
    );
    return reply.redirect(`/admin/index/jobs/${job.id}`, 303);
  });

  panel.post('/index/search-command', async (request, reply) => {
    const user = me(request);
    const form = (request.body ?? {}) as Form;
    const command = first(form.command);
    if (command !== 'rebuild-keyword' && command !== 'reembed') throw new PanelError(400, 'Unknown search command.');
    // Both commands change only rows of the shared database: they run here, whichever process owns the vault.
    const vault = chosenVault(ctx, user, form, 'handle', true);
    const of = vault ? `vault ${vault.row.name}` : 'every vault';
    const job = jobs.start(
      command === 'reembed' ? `Re-embed every note of ${of}` : `Rebuild the keyword index of ${of}`,
      user.name,
      async () => {
        const lines: string[] = [];
        await familyCommandOp(ctx.operations(), 'search', command, [], (line) => lines.push(line), vault?.handle);
        return lines.join('\n');
      },
    );
    return reply.redirect(`/admin/index/jobs/${job.id}`, 303);
  });
}
