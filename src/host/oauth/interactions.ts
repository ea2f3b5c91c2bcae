// The interaction routes the authorization server sends browsers to: sign-in (password or one-time
// code) and consent (which client, where it sends you back, which vault, which scopes). Every POST
// carries a CSRF token bound to a SameSite=Strict cookie; failed sign-ins are budgeted per address
// (429 with Retry-After); pages carry a strict CSP. Never grants a scope the user did not tick.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type Provider from 'oidc-provider';
import type { Logger } from '../../sdk/types.js';
import type { AttemptBudget } from '../auth/attempt-budget.js';
import { checkPassword, useSignInLink } from '../auth/passwords.js';
import { userByName } from '../auth/users.js';
import { consentPage, messagePage, signInPage, type PageFrame } from './pages.js';
import { SCOPE_READ, SCOPE_WRITE, type OAuthEndpoints } from './provider.js';

export interface InteractionOptions {
  readonly provider: Provider;
  readonly db: Kysely<any>;
  readonly log: Logger;
  readonly endpoints: OAuthEndpoints;
  /** HMAC key of the CSRF tokens (a stored secret, so tokens survive a restart mid-flow). */
  readonly csrfKey: string;
  /** Failed sign-ins per address: the same budget the panel's sign-in spends. */
  readonly signInBudget: AttemptBudget;
}

const CSRF_COOKIE = 'exo_csrf';
const PREFIX = '/oauth/interaction/';

type Form = Record<string, string | string[] | undefined>;

function first(v: string | string[] | undefined): string {
  return Array.isArray(v) ? (v[0] ?? '') : (v ?? '');
}

function all(v: string | string[] | undefined): string[] {
  return Array.isArray(v) ? v : v === undefined ? [] : [v];
}

function cookieOf(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie ?? '';
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

/**
 * The address failed sign-ins are counted against: the socket peer, or — when that peer is a
 * loopback reverse proxy — the address it says it forwarded for (the rightmost X-Forwarded-For entry).
 */
export function clientAddress(request: Pick<FastifyRequest['raw'], 'socket' | 'headers'>): string {
  const peer = request.socket.remoteAddress ?? 'unknown';
  const loopback = peer === '127.0.0.1' || peer === '::1' || peer === '::ffff:127.0.0.1';
  const forwarded = request.headers['x-forwarded-for'];
  if (loopback && typeof forwarded === 'string' && forwarded.trim()) return forwarded.split(',').pop()!.trim();
  return peer;
}

/** Whether a signed-in account may still be granted anything: enabled and bound to a vault (as findAccount requires). */
function usable(user: Awaited<ReturnType<typeof userByName>>): boolean {
  return !!user && !user.disabledAt && user.vaultId !== null;
}

export function registerInteractionRoutes(app: FastifyInstance, o: InteractionOptions): void {
  const secure = o.endpoints.issuer.startsWith('https:');

  const csrfFor = (seed: string, uid: string) =>
    createHmac('sha256', o.csrfKey).update(`${seed}.${uid}`).digest('base64url');

  /** Headers every page gets: the CSP allows the nonce'd style and form posts to here and to `redirectOrigin`. */
  const send = (reply: FastifyReply, status: number, html: string, nonce: string, redirectOrigin?: string) => {
    const formAction = ["'self'", ...(redirectOrigin ? [redirectOrigin] : [])].join(' ');
    return reply
      .code(status)
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header(
        'content-security-policy',
        `default-src 'none'; style-src 'nonce-${nonce}'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
      )
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'no-referrer')
      .send(html);
  };

  /** The CSRF token bound to this browser's seed cookie (made when absent, kept so two tabs agree) and this interaction. */
  const frameFor = (request: FastifyRequest, reply: FastifyReply, uid: string, action: string): PageFrame => {
    let seed = cookieOf(request, CSRF_COOKIE);
    if (!seed || !/^[A-Za-z0-9_-]{24}$/.test(seed)) {
      seed = randomBytes(18).toString('base64url');
      reply.header(
        'set-cookie',
        `${CSRF_COOKIE}=${seed}; Path=${PREFIX}${uid}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`,
      );
    }
    return { nonce: randomBytes(16).toString('base64'), csrf: csrfFor(seed, uid), action };
  };

  const csrfValid = (request: FastifyRequest, uid: string, form: Form) => {
    const seed = cookieOf(request, CSRF_COOKIE);
    const given = Buffer.from(first(form.csrf));
    if (!seed || given.length === 0) return false;
    const want = Buffer.from(csrfFor(seed, uid));
    return given.length === want.length && timingSafeEqual(given, want);
  };

  const redirectOrigin = (params: Record<string, unknown>) => {
    try {
      return new URL(String(params.redirect_uri)).origin;
    } catch {
      return undefined;
    }
  };

  const details = async (request: FastifyRequest, reply: FastifyReply) => {
    try {
      return await o.provider.interactionDetails(request.raw, reply.raw);
    } catch {
      return undefined;
    }
  };

  const expired = (reply: FastifyReply) => {
    const nonce = randomBytes(16).toString('base64');
    return send(
      reply,
      400,
      messagePage({ nonce }, 'This sign-in has expired', 'Start again from the application that sent you here.'),
      nonce,
    );
  };

  const clientLabel = async (clientId: string) => {
    const client = await o.provider.Client.find(clientId).catch(() => undefined);
    return { client, name: String(client?.clientName ?? clientId) };
  };

  const renderSignIn = async (
    request: FastifyRequest,
    reply: FastifyReply,
    uid: string,
    params: Record<string, unknown>,
    status = 200,
    error?: string,
    userName?: string,
  ) => {
    const { name } = await clientLabel(String(params.client_id));
    const frame = frameFor(request, reply, uid, `${PREFIX}${uid}/sign-in`);
    return send(
      reply,
      status,
      signInPage(frame, { clientName: name, error, userName }),
      frame.nonce,
      redirectOrigin(params),
    );
  };

  app.get<{ Params: { uid: string } }>(`${PREFIX}:uid`, async (request, reply) => {
    const interaction = await details(request, reply);
    if (!interaction || interaction.uid !== request.params.uid) return expired(reply);
    const params = interaction.params as Record<string, unknown>;
    if (interaction.prompt.name === 'login') return renderSignIn(request, reply, interaction.uid, params);
    const accountId = interaction.session?.accountId;
    const user = accountId ? await userByName(o.db, accountId) : undefined;
    if (!user) return renderSignIn(request, reply, interaction.uid, params);
    if (!usable(user)) return disabled(reply);
    const { client, name } = await clientLabel(String(params.client_id));
    const requested = String(params.scope ?? '').split(' ');
    const frame = frameFor(request, reply, interaction.uid, `${PREFIX}${interaction.uid}/consent`);
    const redirect = redirectOrigin(params);
    return send(
      reply,
      200,
      consentPage(frame, {
        clientName: name,
        clientId: String(params.client_id),
        redirectHost: redirect ? new URL(redirect).host : String(params.redirect_uri),
        registration: (client as { clientIdMetadataDocument?: boolean } | undefined)?.clientIdMetadataDocument
          ? 'client metadata document'
          : 'dynamic registration (DCR)',
        user: user.name,
        vault: user.vaultName ?? '(none)',
        wantsWrite: requested.includes(SCOPE_WRITE),
      }),
      frame.nonce,
      redirect,
    );
  });

  app.post<{ Params: { uid: string }; Body: Form }>(`${PREFIX}:uid/sign-in`, async (request, reply) => {
    const interaction = await details(request, reply);
    if (!interaction || interaction.uid !== request.params.uid) return expired(reply);
    const form = request.body ?? {};
    const params = interaction.params as Record<string, unknown>;
    if (!csrfValid(request, interaction.uid, form)) {
      const nonce = randomBytes(16).toString('base64');
      return send(
        reply,
        403,
        messagePage(
          { nonce },
          'This form has expired',
          'The form was missing its security token. Go back, reload the page and try again.',
        ),
        nonce,
      );
    }
    const address = clientAddress(request);
    // Counted before the credential is checked (one database statement), so parallel posts cannot race it.
    const spent = await o.signInBudget.spend(address);
    if (!spent.allowed) return tooMany(reply, spent.retryAfterSeconds);
    const userName = first(form.user).trim();
    const code = first(form.code).trim();
    const password = first(form.password);
    let accountId: string | undefined;
    if (code) accountId = await useSignInLink(o.db, code);
    else if (userName && password) accountId = await checkPassword(o.db, userName, password);
    if (accountId && userName && accountId !== userName) accountId = undefined;
    if (!accountId) {
      o.log.info({ user: userName || null, address }, 'oauth sign-in failed');
      return renderSignIn(request, reply, interaction.uid, params, 401, 'Wrong user name, password or code.', userName);
    }
    await o.signInBudget.refund(address);
    const returnTo = await o.provider.interactionResult(
      request.raw,
      reply.raw,
      { login: { accountId } },
      { mergeWithLastSubmission: false },
    );
    return reply.code(303).header('location', returnTo).header('cache-control', 'no-store').send();
  });

  app.post<{ Params: { uid: string }; Body: Form }>(`${PREFIX}:uid/consent`, async (request, reply) => {
    const interaction = await details(request, reply);
    if (!interaction || interaction.uid !== request.params.uid) return expired(reply);
    const form = request.body ?? {};
    if (!csrfValid(request, interaction.uid, form)) {
      const nonce = randomBytes(16).toString('base64');
      return send(
        reply,
        403,
        messagePage(
          { nonce },
          'This form has expired',
          'The form was missing its security token. Go back, reload the page and try again.',
        ),
        nonce,
      );
    }
    if (interaction.prompt.name !== 'consent' || !interaction.session?.accountId) return expired(reply);
    // Disabled (or unbound from its vault) since signing in: refuse here, typed, rather than let the
    // provider fail to find the account when it resumes.
    if (!usable(await userByName(o.db, interaction.session.accountId))) return disabled(reply);
    let result: Record<string, unknown>;
    if (first(form.decision) !== 'allow') {
      result = { error: 'access_denied', error_description: 'the user denied the request' };
    } else {
      const params = interaction.params as Record<string, unknown>;
      const chosen = new Set<string>(all(form.scope).filter((s) => s === SCOPE_READ || s === SCOPE_WRITE));
      if (chosen.has(SCOPE_WRITE)) chosen.add(SCOPE_READ);
      const grant = interaction.grantId ? await o.provider.Grant.find(interaction.grantId) : undefined;
      const g =
        grant ?? new o.provider.Grant({ accountId: interaction.session.accountId, clientId: String(params.client_id) });
      const promptDetails = interaction.prompt.details as {
        missingOIDCScope?: string[];
        missingResourceScopes?: Record<string, string[]>;
      };
      // The vault scopes are listed as provider scopes too (so the metadata names them): grant what was
      // ticked, and reject the rest, so the provider counts them as answered rather than asking again.
      const isVaultScope = (s: string) => s === SCOPE_READ || s === SCOPE_WRITE;
      const oidcScopes = promptDetails.missingOIDCScope ?? [];
      const grantedOidc = oidcScopes.filter((s) => !isVaultScope(s) || chosen.has(s));
      const rejectedOidc = oidcScopes.filter((s) => isVaultScope(s) && !chosen.has(s));
      if (grantedOidc.length) g.addOIDCScope(grantedOidc.join(' '));
      if (rejectedOidc.length) g.rejectOIDCScope(rejectedOidc.join(' '));
      for (const [indicator, asked] of Object.entries(promptDetails.missingResourceScopes ?? {})) {
        const granted = asked.filter((s) => chosen.has(s));
        const rejected = asked.filter((s) => !chosen.has(s));
        if (granted.length) g.addResourceScope(indicator, granted.join(' '));
        if (rejected.length) g.rejectResourceScope(indicator, rejected.join(' '));
      }
      result = { consent: { grantId: await g.save() } };
    }
    const returnTo = await o.provider.interactionResult(request.raw, reply.raw, result, {
      mergeWithLastSubmission: true,
    });
    return reply.code(303).header('location', returnTo).header('cache-control', 'no-store').send();
  });

  const disabled = (reply: FastifyReply) => {
    const nonce = randomBytes(16).toString('base64');
    return send(
      reply,
      403,
      messagePage(
        { nonce },
        'This account is disabled',
        'An administrator disabled this account (or removed its vault) after you signed in, so nothing was granted. Ask them to enable it, then start again from the application.',
      ),
      nonce,
    );
  };

  const tooMany = (reply: FastifyReply, seconds: number) => {
    const nonce = randomBytes(16).toString('base64');
    reply.header('retry-after', String(seconds));
    return send(
      reply,
      429,
      messagePage({ nonce }, 'Too many failed sign-ins', `Wait ${seconds} seconds, then try again.`),
      nonce,
    );
  };
}
