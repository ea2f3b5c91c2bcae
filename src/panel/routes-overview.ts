// Overview: the vaults this user may see with note counts and index state, the families loaded (state,
// read-only, generation), uptime, version and each family's declared backlog (the embedding backlog) per
// vault, from the same data /health reports.
import type { FastifyInstance } from 'fastify';
import { vaultsListOp } from '../host/admin/account-operations.js';
import type { VaultHealth } from '../host/vaults/registry.js';
import { html } from './html.js';
import { page } from './layout.js';
import { me, type PanelContext } from './context.js';
import { backlogOf } from '../sdk/define-family.js';

export function duration(seconds: number): string {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return d ? `${d} d ${h} h` : h ? `${h} h ${m} min` : `${m} min ${Math.floor(seconds % 60)} s`;
}

function plural(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

export function registerOverview(panel: FastifyInstance, ctx: PanelContext): void {
  panel.get('/', async (request, reply) => {
    const user = me(request);
    const [health, vaults] = await Promise.all([ctx.health(), vaultsListOp(ctx.operations())]);
    const mine = user.admin ? vaults : vaults.filter((v) => v.name === user.vaultName);
    const families = [...ctx.registry.status].sort(([a], [b]) => a.localeCompare(b));
    // Each family's declared backlog (healthBacklog) per vault, from /health's per-vault family health.
    const backlogs = [...ctx.registry.generations.values()].flatMap((g) =>
      g.family.healthBacklog ? [{ family: g.name, ...g.family.healthBacklog }] : [],
    );
    const healthOf = (vault: string) =>
      ((health.vaults as Record<string, { familyHealth?: Record<string, unknown> }> | undefined)?.[vault]
        ?.familyHealth ?? {}) as Record<string, unknown>;
    const backlogIn = (vault: string, b: (typeof backlogs)[number]) => backlogOf(healthOf(vault)[b.family], b);
    const frame = ctx.frame(request, reply, 'overview');
    const body = html`<div class="grid">
<section aria-labelledby="st"><h2 id="st">Server</h2><span class="stat">${String(health.status)}</span>
<p>Version ${String(health.version)} · up ${duration(Number(health.uptimeSeconds ?? 0))} · database ${String(health.engine)} (${String(health.db)})</p>
<p>${plural(Number(health.sessions ?? 0), 'open MCP session')} · ${plural(Number(health.tools ?? 0), 'tool')}</p></section>
${backlogs.map((b) => {
  const per = mine.map((v) => backlogIn(v.name, b)).filter((n): n is number => n !== undefined);
  return html`<section aria-labelledby="bl-${b.name}"><h2 id="bl-${b.name}">${b.name[0].toUpperCase()}${b.name.slice(1)} backlog</h2>${
    per.length
      ? html`<span class="stat">${String(per.reduce((a, n) => a + n, 0))}</span><p>${b.help} ${mine.length > 1 ? 'Every vault shown below, summed; per vault in the table.' : ''}</p>`
      : html`<p class="muted">Off in ${mine.length > 1 ? 'every vault' : 'this vault'}: nothing waits.</p>`
  }</section>`;
})}</div>
<section aria-labelledby="vl"><h2 id="vl">Vaults</h2><div class="table-wrap"><table>
<thead><tr><th scope="col">Vault</th><th scope="col">State</th><th scope="col" class="num">Notes</th><th scope="col" class="num">Pending</th><th scope="col">Watcher</th><th scope="col">Last error</th>${backlogs.map((b) => html`<th scope="col" class="num">${b.name} backlog</th>`)}<th scope="col">Users</th></tr></thead>
<tbody>${mine.map((v) => {
      const s = v.status as VaultHealth;
      return html`<tr><th scope="row">${v.name}</th><td class="${s.state === 'serving' ? 'state-on' : 'state-bad'}">${s.state}${s.reason ? html`: ${s.reason}` : ''}</td><td class="num">${String(s.notes ?? '-')}</td><td class="num">${String(s.pending ?? '-')}</td><td>${s.watcher ?? '-'}</td><td>${s.lastError ?? ''}</td>${backlogs.map((b) => html`<td class="num">${String(backlogIn(v.name, b) ?? '-')}</td>`)}<td>${v.users.join(', ')}</td></tr>`;
    })}</tbody></table></div></section>
<section aria-labelledby="fl"><h2 id="fl">Families</h2><div class="table-wrap"><table>
<thead><tr><th scope="col">Family</th><th scope="col">State</th><th scope="col" class="num">Generation</th><th scope="col" class="num">Tools</th><th scope="col">Note</th></tr></thead>
<tbody>${families.map(([name, st]) => {
      const label =
        st.state !== 'serving' ? (st.state === 'disabled' ? 'off' : st.state) : st.readOnly ? 'read-only' : 'on';
      const cls =
        st.state === 'disabled'
          ? 'state-off'
          : st.state !== 'serving'
            ? 'state-bad'
            : st.readOnly
              ? 'state-ro'
              : 'state-on';
      return html`<tr><th scope="row">${name}</th><td class="${cls}">${label}</td><td class="num">${st.generation === null ? '-' : String(st.generation)}</td><td class="num">${String(st.tools)}</td><td>${user.admin ? (st.reason ?? '') : ''}</td></tr>`;
    })}</tbody></table></div></section>`;
    return ctx.send(reply, 200, page(frame, 'Overview', body));
  });
}
