// Users and vaults (admins only): what `exocortex users …` and `exocortex vaults add` do, from the panel —
// list users with their vault, role, state, keys and limits; add a user; set a password; mint a one-time
// sign-in code (shown once, on the answer page, never in a cookie); make or unmake an admin; set or clear
// a user's limits; add a vault. Each POST runs the CLI's own operation (src/host/admin/); users and vaults
// declared in the config file are refused there, as on the CLI. Disabling and removing stay in the danger zone.
import type { FastifyInstance } from 'fastify';
import {
  usersAddOp,
  usersAdminOp,
  usersLimitsOp,
  usersListOp,
  vaultsAddOp,
  vaultsListOp,
} from '../host/admin/account-operations.js';
import { usersLoginLinkOp, usersPasswdOp } from '../host/admin/oauth-operations.js';
import { html } from './html.js';
import { csrfField, page, type Frame } from './layout.js';
import { first, PanelError, requireAdmin, runOperation, type Form, type PanelContext } from './context.js';

const LIMITS = [
  ['callsPerMinute', 'Calls per minute'],
  ['writesPerMinute', 'Writes per minute'],
  ['dailyQuota', 'Calls per day'],
  ['sessions', 'Open sessions'],
  ['concurrency.read', 'Concurrent reads'],
  ['concurrency.write', 'Concurrent writes'],
  ['concurrency.expensive', 'Concurrent expensive calls'],
] as const;

function limitsText(limits: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(limits)) {
    if (v && typeof v === 'object') for (const [k2, v2] of Object.entries(v)) parts.push(`${k}.${k2} ${String(v2)}`);
    else parts.push(`${k} ${String(v)}`);
  }
  return parts.join(', ') || 'defaults';
}

export function registerUsers(panel: FastifyInstance, ctx: PanelContext): void {
  panel.get('/users', async (request, reply) => {
    const signedIn = requireAdmin(request);
    const t = ctx.operations();
    const [users, vaults] = await Promise.all([usersListOp(t), vaultsListOp(t)]);
    const frame = ctx.frame(request, reply, 'users');
    const userForm = (action: string, name: string, inner: ReturnType<typeof html>) =>
      html`<form method="post" action="/admin/users/${action}" class="inline">${csrfField(frame)}<input type="hidden" name="user" value="${name}">${inner}</form>`;
    const body = html`<section aria-labelledby="ul"><h2 id="ul">Users</h2><div class="table-wrap"><table><thead><tr><th scope="col">User</th><th scope="col">Vault</th><th scope="col">Role</th><th scope="col">State</th><th scope="col" class="num">Active keys</th><th scope="col">Limits</th><th scope="col">Actions</th></tr></thead>
<tbody>${users.map(
      (u) =>
        html`<tr><th scope="row">${u.name}</th><td>${u.vault ?? '-'}</td><td>${u.admin ? 'admin' : 'user'}</td><td>${u.state}${u.source === 'config' ? html` <span class="muted">(config file)</span>` : ''}</td><td class="num">${String(u.keys)}</td><td>${limitsText(u.limits as Record<string, unknown>)}</td>
<td><a href="/admin/users/edit?user=${encodeURIComponent(u.name)}">Password, code, limits…</a>${
          u.source === 'config' || (u.name === signedIn.name && u.admin)
            ? ''
            : userForm(
                'admin',
                u.name,
                html`<input type="hidden" name="admin" value="${u.admin ? 'false' : 'true'}"><button type="submit" class="secondary">${u.admin ? `Remove admin from ${u.name}` : `Make ${u.name} an admin`}</button>`,
              )
        }</td></tr>`,
    )}</tbody></table></div></section>
<div class="grid"><section aria-labelledby="ua"><h2 id="ua">Add a user</h2><form method="post" action="/admin/users/add">${csrfField(frame)}
<label for="new-user">Name</label><input type="text" id="new-user" name="user" required pattern="[A-Za-z0-9][A-Za-z0-9._-]*" maxlength="64">
<label for="new-user-vault">Vault</label><select id="new-user-vault" name="vault">${vaults.map((v) => html`<option value="${v.name}">${v.name}${v.users.length ? ` (${v.users.join(', ')})` : ''}</option>`)}</select>
<label><input type="checkbox" name="share" value="true"> Share the vault if it has a user already</label>
<label><input type="checkbox" name="admin" value="true"> Administrator</label>
<button type="submit">Add user</button></form></section>
<section aria-labelledby="va"><h2 id="va">Add a vault</h2><form method="post" action="/admin/users/add-vault">${csrfField(frame)}
<label for="new-vault">Name</label><input type="text" id="new-vault" name="vault" required pattern="[A-Za-z0-9][A-Za-z0-9._-]*" maxlength="64">
<label for="new-vault-root">Root folder (absolute path on the server)</label><input type="text" id="new-vault-root" name="root" required>
<label><input type="checkbox" name="shared" value="true"> Shared (several users)</label>
<button type="submit">Add vault</button></form></section></div>`;
    return ctx.send(reply, 200, page(frame, 'Users and vaults', body));
  });

  panel.get('/users/edit', async (request, reply) => {
    requireAdmin(request);
    const name = String((request.query as Record<string, string | undefined>).user ?? '');
    const u = (await usersListOp(ctx.operations())).find((x) => x.name === name);
    if (!u) throw new PanelError(404, `There is no user "${name}".`);
    const frame = ctx.frame(request, reply, 'users');
    const lim = u.limits as Record<string, any>;
    const valueOf = (key: string) => {
      const [a, b] = key.split('.');
      const v = b ? lim[a]?.[b] : lim[a];
      return v === undefined ? '' : String(v);
    };
    const body = html`<div class="grid"><section aria-labelledby="pw"><h2 id="pw">Password</h2><form method="post" action="/admin/users/passwd">${csrfField(frame)}<input type="hidden" name="user" value="${u.name}">
<label for="pw-new">New password for ${u.name} (10 characters or more)</label><input type="password" id="pw-new" name="password" autocomplete="new-password" minlength="10" required>
<button type="submit">Set password</button></form></section>
<section aria-labelledby="code"><h2 id="code">One-time sign-in code</h2><form method="post" action="/admin/users/login-link">${csrfField(frame)}<input type="hidden" name="user" value="${u.name}">
<p>For a user without a password: the code signs in once, on this panel or the OAuth sign-in page.</p><button type="submit" class="secondary">Mint a code for ${u.name}</button></form></section></div>
<section aria-labelledby="lim"><h2 id="lim">Limits over admission.perUser</h2><form method="post" action="/admin/users/limits">${csrfField(frame)}<input type="hidden" name="user" value="${u.name}">
<p class="muted">Empty: keep what is set (or the default); 0: no limit for this user even where the default sets one.</p>
${LIMITS.map(([key, label]) => html`<label for="lim-${key}">${label}</label><input type="text" inputmode="numeric" pattern="[0-9]*" id="lim-${key}" name="${key}" value="${valueOf(key)}">`)}
<label><input type="checkbox" name="clear" value="true"> Clear every limit first</label>
<button type="submit">Save limits</button></form></section><p><a href="/admin/users">Back to users and vaults</a></p>`;
    return ctx.send(reply, 200, page(frame, `User ${u.name}`, body));
  });

  panel.post('/users/add', async (request, reply) => {
    requireAdmin(request);
    const f = (request.body ?? {}) as Form;
    return ctx.operate(reply, '/admin/users', async () => {
      const u = await usersAddOp(ctx.operations(), {
        name: first(f.user).trim(),
        vault: first(f.vault),
        admin: first(f.admin) === 'true',
        share: first(f.share) === 'true',
      });
      return `Added ${u.name}, bound to ${u.vault ?? '-'}. Set a password or mint a sign-in code for them.`;
    });
  });

  panel.post('/users/add-vault', async (request, reply) => {
    requireAdmin(request);
    const f = (request.body ?? {}) as Form;
    return ctx.operate(reply, '/admin/users', async () => {
      const v = await vaultsAddOp(ctx.operations(), {
        name: first(f.vault).trim(),
        root: first(f.root).trim(),
        shared: first(f.shared) === 'true',
      });
      return `Added the vault ${v.name} (${v.status.state}); add a user bound to it.`;
    });
  });

  panel.post('/users/admin', async (request, reply) => {
    const me = requireAdmin(request);
    const f = (request.body ?? {}) as Form;
    if (first(f.user) === me.name && first(f.admin) !== 'true')
      throw new PanelError(
        400,
        'You cannot take your own administrator role away here (another admin or the CLI can).',
      );
    return ctx.operate(reply, '/admin/users', async () => {
      const u = await usersAdminOp(ctx.operations(), { name: first(f.user), admin: first(f.admin) === 'true' });
      return u.admin ? `${u.name} is an administrator.` : `${u.name} is no longer an administrator.`;
    });
  });

  panel.post('/users/passwd', async (request, reply) => {
    requireAdmin(request);
    const f = (request.body ?? {}) as Form;
    return ctx.operate(reply, '/admin/users', async () => {
      const r = await usersPasswdOp(ctx.operations(), { name: first(f.user), password: first(f.password) });
      return `Set the password of ${r.user}.`;
    });
  });

  panel.post('/users/limits', async (request, reply) => {
    requireAdmin(request);
    const f = (request.body ?? {}) as Form;
    const limits: Record<string, any> = {};
    for (const [key] of LIMITS) {
      const v = first(f[key]).trim();
      if (v === '') continue;
      if (!/^\d{1,9}$/.test(v)) throw new PanelError(400, `${key} must be a whole number (0 for none).`);
      const [a, b] = key.split('.');
      if (b) limits[a] = { ...(limits[a] ?? {}), [b]: Number(v) };
      else limits[a] = Number(v);
    }
    return ctx.operate(reply, '/admin/users', async () => {
      const u = await usersLimitsOp(ctx.operations(), {
        name: first(f.user),
        limits,
        clear: first(f.clear) === 'true',
      });
      return `Limits of ${u.name}: ${limitsText(u.limits as Record<string, unknown>)}.`;
    });
  });

  // The code is shown on this answer page only (a redirect would carry it in a cookie).
  panel.post('/users/login-link', async (request, reply) => {
    requireAdmin(request);
    const name = first(((request.body ?? {}) as Form).user);
    const r = await runOperation(() => usersLoginLinkOp(ctx.operations(), name));
    const frame: Frame = ctx.frame(request, reply, 'users');
    const body = html`<section class="card"><p>Give this code to ${r.user}; it signs in once, until ${r.expiresAt.slice(0, 16).replace('T', ' ')} UTC, and is not shown again.</p>
<p><code id="sign-in-code">${r.code}</code></p><p><a href="/admin/users">Back to users and vaults</a></p></section>`;
    return ctx.send(reply, 200, page(frame, `Sign-in code for ${r.user}`, body));
  });
}
