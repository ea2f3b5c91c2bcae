// What every panel page gets: the host's dependencies, the shared page helpers, the form and refusal types,
// and the guards (signed in, admin). The server builds one PanelContext; page modules only import this file.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../sdk/types.js';
import { OperationError } from '../host/admin/operations.js';
import type { SurfaceDeps } from '../host/http/surfaces.js';
import { Refusal } from '../sdk/refusals.js';
import { refusalPanelText } from '../host/refusal-presenter.js';
import type { Frame } from './layout.js';
import type { PanelUser } from '../host/auth/panel-sessions.js';

/** What the panel gets from the host: what the host gives every HTTP surface (src/host/http/surfaces.ts). */
export type PanelDeps = SurfaceDeps;

export type Form = Record<string, string | string[] | undefined>;

/** What each page module gets: the deps and the helpers every page shares. */
export interface PanelContext extends PanelDeps {
  frame(request: FastifyRequest, reply: FastifyReply, current?: string): Frame;
  send(reply: FastifyReply, status: number, body: string): FastifyReply;
  /** Redirect after a POST (303), carrying a one-shot message for the next page. */
  done(reply: FastifyReply, to: string, flash: string): FastifyReply;
  /**
   * Run an operator command for a form and redirect to `to` with the message it returns; an operation's or a
   * refusal's error becomes a 400 page that says why (the same operations the CLI runs, so the same refusals).
   */
  operate(reply: FastifyReply, to: string, op: () => Promise<string>): Promise<FastifyReply>;
  /** The principal a signed-in user's tool calls run as (their own vault, their full scopes). */
  principalOf(user: PanelUser): Principal;
  /** The user whose data a page shows: the signed-in one, or (admins only) the one named by ?user=. */
  userOf(request: FastifyRequest): Promise<PanelUser>;
}

declare module 'fastify' {
  interface FastifyRequest {
    panelUser: PanelUser | null;
  }
}

export class PanelError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Run an operator command (the CLI's own operation); its refusal or operation error becomes a 400 panel page
 * that says why. Anything else is a fault and propagates.
 */
export async function runOperation<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    if (e instanceof Refusal) {
      const { status, text } = refusalPanelText(e);
      throw new PanelError(status, text);
    }
    if (e instanceof OperationError) throw new PanelError(400, e.message);
    throw e;
  }
}

export function first(v: string | string[] | undefined): string {
  return Array.isArray(v) ? (v[0] ?? '') : (v ?? '');
}

export function all(v: string | string[] | undefined): string[] {
  return Array.isArray(v) ? v : v === undefined ? [] : [v];
}

/** The signed-in user, or a refusal (routes run only after the auth hook set it). */
export function me(request: FastifyRequest): PanelUser {
  if (!request.panelUser) throw new PanelError(401, 'Sign in first.');
  return request.panelUser;
}

/** Refuse a non-admin. */
export function requireAdmin(request: FastifyRequest): PanelUser {
  const user = me(request);
  if (!user.admin) throw new PanelError(403, 'Only administrators may do this.');
  return user;
}
