// Credentials: API keys (mint with scopes, the secret shown once; revoke) and OAuth grants and clients
// (revoke), through the CLI's own operations, so a key revoked here is refused on its next request and its
// open sessions close. A non-admin sees and touches only their own; clients are server-wide (admins).
import { clientLabel, redirectHosts } from './client-label.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { keysCreateOp, keysListOp, keysRevokeOp, OperationError, type KeyRow } from '../host/admin/operations.js';
import { usersListOp } from '../host/admin/account-operations.js';
import {
  oauthClientsListOp,
  oauthClientsRevokeOp,
  oauthGrantsListOp,
  oauthGrantsRevokeOp,
} from '../host/admin/oauth-operations.js';
import { html } from './html.js';
import { csrfField, page } from './layout.js';
import { first, me, PanelError, requireAdmin, type Form, type PanelContext } from './context.js';

const SCOPES: ReadonlyArray<readonly [string, string]> = [
  ['read', 'read: read and search every family'],
  ['readwrite', 'readwrite: also create, edit, move and delete notes'],
];

export function registerCredentials(panel: FastifyInstance, ctx: PanelContext): void {
  const render = async (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    extra: { minted?: { raw: string; key: KeyRow }; error?: string } = {},
  ) => {
    const user = me(request);
    const subject = await ctx.userOf(request);
    const t = ctx.operations();
    const all = await keysListOp(t);
    const keys = all
      .filter((k) => (user.admin && subject === user ? true : k.user === subject.name) && k.state === 'active')
      .slice(0, ctx.settings().host.panel.pageSize);
    const grants = (await oauthGrantsListOp(t).catch(() => [])).filter((g) =>
      user.admin && subject === user ? true : g.user === subject.name,
    );
    // Every client is read to name the grants' clients (name, redirect host, date); only admins see the list.
    const allClients = grants.length || user.admin ? await oauthClientsListOp(t).catch(() => []) : [];
    const clients = user.admin ? allClients : [];
    const clientById = new Map(allClients.map((c) => [c.clientId, c]));
    const users = user.admin ? (await usersListOp(t)).filter((u) => u.state === 'active' && u.vault) : [];
    const frame = { ...ctx.frame(request, reply, 'credentials'), error: extra.error };
    const body = html`${
      extra.minted
        ? html`<section class="card" aria-labelledby="new"><h2 id="new">New key "${extra.minted.key.name}"</h2><p>Copy it now: it is shown only this once and cannot be read back.</p><code class="secret" id="minted-key">${extra.minted.raw}</code></section>`
        : ''
    }
<section aria-labelledby="keys"><h2 id="keys">API keys${user.admin && subject === user ? ' (every user)' : ''}</h2><div class="table-wrap"><table id="key-table">
<thead><tr><th scope="col">Name</th><th scope="col">User</th><th scope="col">Prefix</th><th scope="col">Scope</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
<tbody>${keys.map(
      (
        k,
      ) => html`<tr id="key-${k.id}"><th scope="row">${k.name}</th><td>${k.user ?? '-'}</td><td><code>${k.prefix}</code></td><td>${k.scope}</td><td>${k.expiresAt?.slice(0, 16).replace('T', ' ') ?? 'never'}</td><td>${k.lastUsedAt?.slice(0, 16).replace('T', ' ') ?? 'never'}</td>
<td><form method="post" action="/admin/credentials/keys/revoke" hx-post="/admin/credentials/keys/revoke" hx-target="#key-${k.id}" hx-swap="outerHTML" hx-confirm="Revoke the key ${k.name}? Clients using it stop working at once.">${csrfField(frame)}<input type="hidden" name="id" value="${k.id}"><button type="submit" class="danger" aria-label="Revoke key ${k.name}">Revoke</button></form></td></tr>`,
    )}</tbody></table></div>${keys.length === 0 ? html`<p class="muted">No active keys.</p>` : ''}</section>
<section aria-labelledby="mint"><h2 id="mint">Mint a key</h2><form method="post" action="/admin/credentials/keys">${csrfField(frame)}
<label for="key-name">Name</label><input type="text" id="key-name" name="name" maxlength="80" required placeholder="laptop claude">
${
  user.admin
    ? html`<label for="key-user">For user</label><select id="key-user" name="user">${users.map((u) => html`<option value="${u.name}"${u.name === subject.name ? html` selected` : ''}>${u.name} (vault ${u.vault ?? '-'})</option>`)}</select>`
    : ''
}
<fieldset><legend>Scope</legend>${SCOPES.map(([v, label], i) => html`<label><input type="radio" name="scope" value="${v}"${i === 0 ? html` checked` : ''}> ${label}</label>`)}
<label for="key-scopes">or per family (space-separated, e.g. <code>notes:write search:read</code>)</label><input type="text" id="key-scopes" name="scopes" placeholder="notes:write search:read"></fieldset>
<label for="key-expires">Expires (e.g. 30d, 12h, 2027-01-31; empty: never)</label><input type="text" id="key-expires" name="expires">
<button type="submit">Mint key</button></form></section>
<section aria-labelledby="grants"><h2 id="grants">OAuth grants</h2>${
      grants.length === 0
        ? html`<p class="muted">No OAuth grants.</p>`
        : html`<div class="table-wrap"><table><thead><tr><th scope="col">Client</th><th scope="col">User</th><th scope="col">Scopes</th><th scope="col">Granted</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead><tbody>${grants.map(
            (g) =>
              html`<tr><th scope="row" title="${g.clientId}">${clientLabel(clientById.get(g.clientId), g.clientId)}</th><td>${g.user}</td><td>${g.scopes}</td><td>${g.createdAt.slice(0, 16).replace('T', ' ')}</td><td><form method="post" action="/admin/credentials/grants/revoke">${csrfField(frame)}<input type="hidden" name="id" value="${g.id}"><button type="submit" class="danger" aria-label="Revoke the grant of ${clientLabel(clientById.get(g.clientId), g.clientId)}">Revoke</button></form></td></tr>`,
          )}</tbody></table></div>`
    }</section>
${
  user.admin
    ? html`<section aria-labelledby="clients"><h2 id="clients">OAuth clients</h2>${
        clients.length === 0
          ? html`<p class="muted">No OAuth clients.</p>`
          : html`<div class="table-wrap"><table><thead><tr><th scope="col">Name</th><th scope="col">Redirect host</th><th scope="col">Registered</th><th scope="col">Client id</th><th scope="col">Registration</th><th scope="col" class="num">Grants</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead><tbody>${clients.map(
              (c) =>
                html`<tr><th scope="row">${c.name}</th><td>${redirectHosts(c).join(', ')}</td><td>${c.createdAt?.slice(0, 10) ?? ''}</td><td><code>${c.clientId}</code></td><td>${c.registration}</td><td class="num">${String(c.grants)}</td><td><form method="post" action="/admin/credentials/clients/revoke">${csrfField(frame)}<input type="hidden" name="id" value="${c.clientId}"><button type="submit" class="danger" aria-label="Revoke the client ${clientLabel(c, c.clientId)}">Revoke</button></form></td></tr>`,
            )}</tbody></table></div>`
      }</section>`
    : ''
}`;
    return ctx.send(reply, status, page(frame, 'Credentials', body));
  };

  panel.get('/credentials', async (request, reply) => render(request, reply, 200));

  panel.post('/credentials/keys', async (request, reply) => {
    const user = me(request);
    const form = (request.body ?? {}) as Form;
    const owner = first(form.user) || user.name;
    if (owner !== user.name && !user.admin) throw new PanelError(403, 'Only administrators mint keys for other users.');
    const scope = first(form.scopes).trim() || first(form.scope) || 'read';
    try {
      const minted = await keysCreateOp(ctx.operations(), {
        name: first(form.name).trim(),
        scope,
        expires: first(form.expires).trim() || undefined,
        user: owner,
      });
      return render(request, reply, 201, { minted });
    } catch (e) {
      if (e instanceof OperationError) return render(request, reply, 400, { error: e.message });
      throw e;
    }
  });

  panel.post('/credentials/keys/revoke', async (request, reply) => {
    const user = me(request);
    const id = first(((request.body ?? {}) as Form).id);
    try {
      await keysRevokeOp(ctx.operations(), id, { exact: true, userName: user.admin ? undefined : user.name });
    } catch (e) {
      if (!(e instanceof OperationError)) throw e;
      if (request.headers['hx-request']) return reply.code(404).send('');
      throw new PanelError(404, user.admin ? 'No active key has that id.' : 'No active key of yours has that id.');
    }
    if (request.headers['hx-request'])
      return ctx.send(
        reply,
        200,
        html`<tr><td colspan="7" role="status">Key revoked: clients using it are refused from their next request.</td></tr>`
          .value,
      );
    return ctx.done(reply, '/admin/credentials', 'Key revoked: clients using it are refused from their next request.');
  });

  panel.post('/credentials/grants/revoke', async (request, reply) => {
    const user = me(request);
    const id = first(((request.body ?? {}) as Form).id);
    const t = ctx.operations();
    const grant = (await oauthGrantsListOp(t)).find((g) => g.id === id);
    if (!grant || (!user.admin && grant.user !== user.name)) throw new PanelError(404, 'No such grant of yours.');
    await oauthGrantsRevokeOp(t, id);
    return ctx.done(
      reply,
      '/admin/credentials',
      `Grant of ${grant.clientId} revoked: its tokens are refused from now on.`,
    );
  });

  panel.post('/credentials/clients/revoke', async (request, reply) => {
    requireAdmin(request);
    const id = first(((request.body ?? {}) as Form).id);
    try {
      const r = await oauthClientsRevokeOp(ctx.operations(), id);
      return ctx.done(reply, '/admin/credentials', `Client revoked with its ${r.grants} grant(s).`);
    } catch (e) {
      if (e instanceof OperationError) throw new PanelError(404, e.message);
      throw e;
    }
  });
}
