// The operator panel at /admin: one encapsulated Fastify context with its own session cookie (server-side
// rows, never an MCP bearer token), CSRF on every POST, a strict CSP (scripts and styles from /admin/assets
// only), and the pages' routes. Pages call the same operations as the CLI and the same tools as agents;
// this file never implements an operation itself.
import { createRequire } from 'node:module';
import { createReadStream } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import { clientAddress } from '../host/oauth/interactions.js';
import { checkPassword, useSignInLink } from '../host/auth/passwords.js';
import { userByName } from '../host/auth/users.js';
import { html } from './html.js';
import { PANEL_CSS, page, type Frame } from './layout.js';
import { createSession, endSession, SESSION_COOKIE, sessionUser } from '../host/auth/panel-sessions.js';
import { first, PanelError, runOperation, type Form, type PanelContext, type PanelDeps } from './context.js';
import { registerOverview } from './routes-overview.js';
import { registerCredentials } from './routes-credentials.js';
import { registerEdits } from './routes-edits.js';
import { registerUsage } from './routes-usage.js';
import { registerIndexPages } from './routes-index.js';
import { registerDanger } from './routes-danger.js';
import { registerNotes } from './routes-notes.js';
import { registerUsers } from './routes-users.js';

const FLASH_COOKIE = 'exo_panel_flash';
const CSRF_COOKIE = 'exo_panel_csrf';
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const PUBLIC = new Set(['/admin/sign-in', '/admin/assets/panel.css', '/admin/assets/htmx.min.js']);

const htmxFile = createRequire(import.meta.url).resolve('htmx.org/dist/htmx.min.js');

export async function registerPanel(app: FastifyInstance, deps: PanelDeps): Promise<void> {
  await app.register(
    async (panel) => {
      const cookieOpts = { path: '/admin', httpOnly: true, sameSite: 'strict' as const, secure: deps.secure };
      await panel.register(cookie);
      await panel.register(csrf, { sessionPlugin: '@fastify/cookie', cookieKey: CSRF_COOKIE, cookieOpts });
      panel.decorateRequest('panelUser', null);

      const ctx: PanelContext = {
        ...deps,
        callTool: (p, t, a) => deps.callTool(p, t, a),
        health: () => deps.health(),
        isAllowedHost: (h) => deps.isAllowedHost(h),
        isAllowedOrigin: (o) => deps.isAllowedOrigin(o),
        frame(request, reply, current) {
          const flash = request.cookies[FLASH_COOKIE];
          if (flash) reply.clearCookie(FLASH_COOKIE, cookieOpts);
          return {
            user: request.panelUser,
            csrf: reply.generateCsrf(),
            current,
            flash: flash ? decodeFlash(flash) : undefined,
          };
        },
        send(reply, status, body) {
          return reply.code(status).header('content-type', 'text/html; charset=utf-8').send(body);
        },
        done(reply, to, flash) {
          reply.setCookie(FLASH_COOKIE, encodeURIComponent(flash.slice(0, 300)), { ...cookieOpts, maxAge: 60 });
          return reply.redirect(to, 303);
        },
        async operate(reply, to, op) {
          return ctx.done(reply, to, await runOperation(op));
        },
        principalOf(user) {
          return {
            kind: 'panel',
            id: `panel:${user.name}`,
            name: `panel (${user.name})`,
            user: user.name,
            vaultId: user.vaultId,
            scopes: ['read', 'readwrite'],
          };
        },
        async userOf(request) {
          const me = request.panelUser!;
          const asked = (request.query as Record<string, string | undefined>).user;
          if (!asked || asked === me.name) return me;
          if (!me.admin) throw new PanelError(403, 'Only administrators see other users.');
          const u = await userByName(deps.db, asked);
          if (!u) throw new PanelError(404, `There is no user "${asked}".`);
          return { id: u.id, name: u.name, admin: u.isAdmin, vaultId: u.vaultId ?? -1, vaultName: u.vaultName ?? '' };
        },
      };

      panel.addHook('onRequest', async (request, reply) => {
        reply
          .header('content-security-policy', CSP)
          .header('cache-control', 'no-store')
          .header('referrer-policy', 'same-origin')
          .header('x-frame-options', 'DENY');
        // same-origin, not no-referrer: under no-referrer browsers send `Origin: null` on form posts, which the Origin check refuses.
        if (!deps.isAllowedHost(request.headers.host))
          throw new PanelError(
            403,
            'Forbidden: Host header not allowed (DNS rebinding protection); add it to server.allowedHosts.',
          );
        if (request.method !== 'GET' && request.method !== 'HEAD' && !deps.isAllowedOrigin(request.headers.origin))
          throw new PanelError(403, 'Forbidden: Origin not allowed.');
        const url = request.url.split('?')[0];
        if (PUBLIC.has(url)) return;
        request.panelUser = (await sessionUser(deps.db, request.cookies[SESSION_COOKIE])) ?? null;
        if (request.panelUser) {
          // A page of one vault is served by the process that owns it (the session cookie travels along).
          const vaultId = deps.route ? await pageVault(ctx, request, url) : undefined;
          if (vaultId !== undefined && (await deps.route!(vaultId, request, reply, request.method !== 'GET')))
            return reply;
          return;
        }
        if (request.headers['hx-request']) return reply.code(401).header('hx-redirect', '/admin/sign-in').send('');
        if (request.method === 'GET')
          return reply.redirect(`/admin/sign-in?next=${encodeURIComponent(request.url)}`, 303);
        throw new PanelError(401, 'Sign in first: this session has ended or expired.');
      });
      // Every POST carries the CSRF token of this browser's secret cookie (the sign-in form too).
      panel.addHook('preHandler', (request, reply, next) => {
        if (request.method === 'POST') return panel.csrfProtection(request, reply, next);
        next();
      });

      panel.setErrorHandler((error: Error & { statusCode?: number; code?: string }, request, reply) => {
        const status = error instanceof PanelError ? error.statusCode : (error.statusCode ?? 500);
        if (status >= 500) deps.log.error({ err: error.stack ?? error.message, url: request.url }, 'panel error');
        const text = error.code?.startsWith('FST_CSRF')
          ? 'This form has expired or did not come from this panel (CSRF check). Go back, reload the page and try again.'
          : status >= 500
            ? 'Something went wrong on the server; the log says what.'
            : error.message;
        const frame: Frame = { user: request.panelUser ?? null, csrf: '' };
        return ctx.send(
          reply,
          status,
          page(
            frame,
            status === 403 ? 'Refused' : status === 404 ? 'Not found' : 'Error',
            html`<p class="error" role="alert">${text}</p><p><a href="/admin/">Back to the overview</a></p>`,
          ),
        );
      });

      panel.get('/assets/panel.css', async (_request, reply) =>
        reply
          .header('content-type', 'text/css; charset=utf-8')
          .header('cache-control', 'public, max-age=3600')
          .send(PANEL_CSS),
      );
      panel.get('/assets/htmx.min.js', async (_request, reply) =>
        reply
          .header('content-type', 'text/javascript; charset=utf-8')
          .header('cache-control', 'public, max-age=86400')
          .send(createReadStream(htmxFile)),
      );

      const signInPage = (
        request: FastifyRequest,
        reply: FastifyReply,
        status: number,
        error?: string,
        userName?: string,
      ) => {
        const next = safeNext(first((request.query as Form).next ?? (request.body as Form | undefined)?.next));
        const frame = { ...ctx.frame(request, reply), user: null, error };
        return ctx.send(
          reply,
          status,
          page(
            frame,
            'Sign in',
            html`<section class="card"><form method="post" action="/admin/sign-in">
<input type="hidden" name="_csrf" value="${frame.csrf}"><input type="hidden" name="next" value="${next}">
<label for="user">User name</label><input type="text" id="user" name="user" autocomplete="username" value="${userName ?? ''}" required>
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password">
<p class="muted">No password? Paste a one-time code from <code>exocortex users login-link NAME</code> instead.</p>
<label for="code">One-time sign-in code</label><input type="text" id="code" name="code" autocomplete="one-time-code">
<button type="submit">Sign in</button></form></section>`,
          ),
        );
      };

      panel.get('/sign-in', async (request, reply) => signInPage(request, reply, 200));
      panel.post('/sign-in', async (request, reply) => {
        const form = (request.body ?? {}) as Form;
        const address = clientAddress(request.raw);
        // Counted before the password is checked, in one database statement: parallel posts cannot all
        // find room left, and a right password is refused once the budget is spent.
        const spent = await deps.signInBudget.spend(address);
        if (!spent.allowed) {
          reply.header('retry-after', String(spent.retryAfterSeconds));
          return signInPage(request, reply, 429, 'Too many failed sign-ins from this address; wait and try again.');
        }
        const name = first(form.user).trim();
        const code = first(form.code).trim();
        const user = code
          ? await useSignInLink(deps.db, code)
          : await checkPassword(deps.db, name, first(form.password));
        if (user) await deps.signInBudget.refund(address);
        if (!user) {
          return signInPage(
            request,
            reply,
            401,
            'That user name and password (or code) did not match an enabled user.',
            name,
          );
        }
        const made = await createSession(deps.db, user, deps.settings().host.panel.sessionTtlSeconds);
        if (!made) return signInPage(request, reply, 401, 'That user no longer exists.', name);
        reply.setCookie(SESSION_COOKIE, made.secret, { ...cookieOpts, expires: made.expiresAt });
        return reply.redirect(safeNext(first(form.next)), 303);
      });
      panel.post('/sign-out', async (request, reply) => {
        await endSession(deps.db, request.cookies[SESSION_COOKIE]);
        reply.clearCookie(SESSION_COOKIE, cookieOpts);
        return reply.redirect('/admin/sign-in', 303);
      });

      registerOverview(panel, ctx);
      registerCredentials(panel, ctx);
      registerEdits(panel, ctx);
      registerUsage(panel, ctx);
      registerIndexPages(panel, ctx);
      registerUsers(panel, ctx);
      registerDanger(panel, ctx);
      registerNotes(panel, ctx);
    },
    { prefix: '/admin' },
  );
}

/**
 * The vault a page reads or changes, when it is one vault's: a note, a note's revisions and diffs, a
 * restore or undo, one user's agent edits. Pages over every vault or none are served where they land.
 */
async function pageVault(ctx: PanelContext, request: FastifyRequest, url: string): Promise<number | undefined> {
  const user = request.panelUser!;
  if (url.startsWith('/admin/notes/')) return user.vaultId;
  if (/^\/admin\/edits\/(?:diff|note|restore|undo)$/.test(url)) return (await ctx.userOf(request)).vaultId;
  if (url === '/admin/edits') {
    const subject = await ctx.userOf(request);
    return user.admin && subject === user ? undefined : subject.vaultId;
  }
  return undefined;
}

/** The one-shot message a redirect left (escaped when rendered); a cookie that does not decode is ignored. */
function decodeFlash(value: string): string | undefined {
  try {
    return decodeURIComponent(value).slice(0, 500);
  } catch {
    return undefined;
  }
}

/** Where to go after signing in: a path under /admin only (never another origin). */
export function safeNext(next: string): string {
  return /^\/admin(?:\/[^\\]*)?$/.test(next) && !next.startsWith('//') ? next : '/admin/';
}
