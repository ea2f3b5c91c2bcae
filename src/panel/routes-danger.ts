// Danger zone (admins only): disable a user, remove a vault, revoke everything of one user. Each action is
// a GET confirmation page that names exactly what will happen, then a POST that runs the CLI's operation.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { keysListOp, keysRevokeOp } from '../host/admin/operations.js';
import { usersDisableOp, usersListOp, vaultsListOp, vaultsRemoveOp } from '../host/admin/account-operations.js';
import { oauthGrantsListOp, oauthGrantsRevokeOp } from '../host/admin/oauth-operations.js';
import { userByName } from '../host/auth/users.js';
import { html, type Html } from './html.js';
import { csrfField, page } from './layout.js';
import { endSessionsOf } from '../host/auth/panel-sessions.js';
import { first, PanelError, requireAdmin, type Form, type PanelContext } from './context.js';

type Action = 'disable' | 'revoke-all' | 'remove-vault';

export function registerDanger(panel: FastifyInstance, ctx: PanelContext): void {
  panel.get('/danger', async (request, reply) => {
    requireAdmin(request);
    const t = ctx.operations();
    const [users, vaults] = await Promise.all([usersListOp(t), vaultsListOp(t)]);
    const frame = ctx.frame(request, reply, 'danger');
    const body = html`<p>Each action below first shows what exactly it will do and asks you to confirm.</p>
<section aria-labelledby="du"><h2 id="du">Users</h2><div class="table-wrap"><table><thead><tr><th scope="col">User</th><th scope="col">Vault</th><th scope="col">State</th><th scope="col" class="num">Active keys</th><th scope="col">Actions</th></tr></thead>
<tbody>${users.map(
      (u) =>
        html`<tr><th scope="row">${u.name}</th><td>${u.vault ?? '-'}</td><td>${u.state}</td><td class="num">${String(u.keys)}</td><td>${
          u.state === 'active' && u.source !== 'config'
            ? html`<a href="/admin/danger/disable?user=${encodeURIComponent(u.name)}">Disable ${u.name}…</a> · `
            : u.source === 'config'
              ? html`<span class="muted">declared in the config file</span> · `
              : ''
        }<a href="/admin/danger/revoke-all?user=${encodeURIComponent(u.name)}">Revoke everything of ${u.name}…</a></td></tr>`,
    )}</tbody></table></div></section>
<section aria-labelledby="dv"><h2 id="dv">Vaults</h2><div class="table-wrap"><table><thead><tr><th scope="col">Vault</th><th scope="col">Users</th><th scope="col">Actions</th></tr></thead>
<tbody>${vaults.map(
      (v) =>
        html`<tr><th scope="row">${v.name}</th><td>${v.users.join(', ') || '-'}</td><td>${
          v.name === ctx.settings().host.vault.name
            ? html`<span class="muted">vault.path's vault (change the config file)</span>`
            : v.source === 'config'
              ? html`<span class="muted">declared in the config file</span>`
              : html`<a href="/admin/danger/remove-vault?vault=${encodeURIComponent(v.name)}">Remove ${v.name}…</a>`
        }</td></tr>`,
    )}</tbody></table></div></section>`;
    return ctx.send(reply, 200, page(frame, 'Danger zone', body));
  });

  /** What an action will do, in sentences, for the confirmation page. */
  const plan = async (action: Action, name: string): Promise<{ title: string; items: string[] }> => {
    const t = ctx.operations();
    if (action === 'remove-vault') {
      const vault = (await vaultsListOp(t)).find((v) => v.name === name);
      if (!vault) throw new PanelError(404, `There is no vault "${name}".`);
      return {
        title: `Remove the vault ${name}`,
        items: [
          `Stop serving ${vault.root} and delete its index rows; the files in the folder stay untouched.`,
          vault.users.length
            ? `Disable its users ${vault.users.join(', ')}: their keys are refused and their sessions close.`
            : 'No user is bound to it.',
        ],
      };
    }
    const user = await userByName(ctx.db, name);
    if (!user) throw new PanelError(404, `There is no user "${name}".`);
    const keys = (await keysListOp(t)).filter((k) => k.user === name && k.state === 'active');
    const grants = (await oauthGrantsListOp(t)).filter((g) => g.user === name);
    const keyText = keys.length ? `${keys.length} API key(s): ${keys.map((k) => k.name).join(', ')}` : 'no API keys';
    if (action === 'disable') {
      return {
        title: `Disable the user ${name}`,
        items: [
          `Refuse every key of ${name} (${keyText}) and their ${grants.length} OAuth grant(s) from the next request on, without deleting them.`,
          'Close their open MCP sessions and end their panel sign-ins.',
          `Their vault ${user.vaultName ?? '-'} and its notes stay as they are.`,
        ],
      };
    }
    return {
      title: `Revoke everything of ${name}`,
      items: [
        `Revoke ${keyText}.`,
        `Revoke ${grants.length} OAuth grant(s) and their tokens.`,
        'Close their open MCP sessions and end their panel sign-ins.',
        `${name} stays enabled and may sign in and mint new credentials.`,
      ],
    };
  };

  const confirm = (action: Action, param: 'user' | 'vault') => async (request: FastifyRequest, reply: FastifyReply) => {
    requireAdmin(request);
    const name = String((request.query as Record<string, string | undefined>)[param] ?? '');
    const p = await plan(action, name);
    const frame = ctx.frame(request, reply, 'danger');
    const body: Html = html`<section class="card"><p>This will:</p><ul>${p.items.map((i) => html`<li>${i}</li>`)}</ul>
<form method="post" action="/admin/danger/${action}">${csrfField(frame)}<input type="hidden" name="${param}" value="${name}">
<button type="submit" class="danger">${p.title}</button> <a href="/admin/danger">Cancel</a></form></section>`;
    return ctx.send(reply, 200, page(frame, `${p.title}?`, body));
  };

  panel.get('/danger/disable', confirm('disable', 'user'));
  panel.get('/danger/revoke-all', confirm('revoke-all', 'user'));
  panel.get('/danger/remove-vault', confirm('remove-vault', 'vault'));

  panel.post('/danger/disable', async (request, reply) => {
    requireAdmin(request);
    const name = first(((request.body ?? {}) as Form).user);
    return ctx.operate(reply, '/admin/danger', async () => {
      const r = await usersDisableOp(ctx.operations(), name);
      return `Disabled ${r.disabled}: ${r.keys} key(s) refused, ${r.sessionsClosed} session(s) closed.`;
    });
  });

  panel.post('/danger/revoke-all', async (request, reply) => {
    requireAdmin(request);
    const name = first(((request.body ?? {}) as Form).user);
    return ctx.operate(reply, '/admin/danger', async () => {
      const t = ctx.operations();
      const user = await userByName(ctx.db, name);
      if (!user) throw new PanelError(404, `There is no user "${name}".`);
      const keys = (await keysListOp(t)).filter((k) => k.user === name && k.state === 'active');
      for (const k of keys) await keysRevokeOp(t, k.id, { exact: true, userName: name }).catch(() => undefined);
      const grants = (await oauthGrantsListOp(t)).filter((g) => g.user === name);
      for (const g of grants) await oauthGrantsRevokeOp(t, g.id);
      const ended = await endSessionsOf(ctx.db, user.id);
      return `Revoked ${keys.length} key(s) and ${grants.length} grant(s) of ${name}; ended ${ended} panel sign-in(s).`;
    });
  });

  panel.post('/danger/remove-vault', async (request, reply) => {
    requireAdmin(request);
    const name = first(((request.body ?? {}) as Form).vault);
    return ctx.operate(reply, '/admin/danger', async () => {
      const r = await vaultsRemoveOp(ctx.operations(), name, true);
      return `Removed the vault ${r.removed}${r.usersDisabled.length ? `; disabled ${r.usersDisabled.join(', ')}` : ''}.`;
    });
  });
}
