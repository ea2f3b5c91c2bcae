// What every panel page gets: the host's dependencies, the shared page helpers, the form and refusal types,
// and the guards (signed in, admin). The server builds one PanelContext; page modules only import this file.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Logger, Principal } from '../../sdk/types.js';
import type { AttemptBudget } from '../auth/attempt-budget.js';
import type { InputNeeded } from '../../sdk/client-channel.js';
import { OperationError, type OperationTarget } from '../admin/operations.js';
import { Refusal } from '../../sdk/refusals.js';
import { refusalPanelText } from '../refusal-presenter.js';
import type { CallResult } from '../families/dispatch.js';
import type { FamilyRegistry } from '../families/registry.js';
import type { Settings } from '../settings/load.js';
import type { Frame } from './layout.js';
import type { PanelUser } from './sessions.js';

/** What the panel needs from the host (the composition root builds it). */
export interface PanelDeps {
  readonly db: Kysely<any>;
  readonly settings: () => Settings;
  readonly log: Logger;
  /** Cookies are Secure when server.publicUrl is https. */
  readonly secure: boolean;
  readonly operations: () => OperationTarget;
  readonly registry: FamilyRegistry;
  /** A tool call through the host's dispatcher, as this principal (the same path an agent's call takes). */
  callTool(principal: Principal, tool: string, args: Record<string, unknown>): Promise<CallResult | InputNeeded>;
  health(): Promise<Record<string, unknown>>;
  isAllowedHost(host: string | undefined): boolean;
  isAllowedOrigin(origin: string | undefined): boolean;
  readonly startedAt: number;
  /** Failed sign-ins per address: the same budget the OAuth sign-in page spends. */
  readonly signInBudget: AttemptBudget;
  /**
   * Several processes on one PostgreSQL server: serve a vault's page where the vault is owned (true: the
   * request was answered there, or refused).
   */
  readonly route?: (vaultId: number, request: FastifyRequest, reply: FastifyReply, write: boolean) => Promise<boolean>;
}

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
