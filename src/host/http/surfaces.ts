// HTTP surfaces: pages a client of the host mounts on the host's listener (the operator panel at /admin is
// one). The host never imports a surface: whoever starts it (the CLI's serve, the test harness) passes the
// surfaces in HostOptions, and the host hands each enabled one what it may use of this process — the same
// operations the CLI and the admin channel run, the dispatcher's tool call, health — when it listens.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { InputNeeded } from '../../sdk/client-channel.js';
import type { Logger, Principal } from '../../sdk/types.js';
import type { OperationTarget } from '../admin/operations.js';
import type { AttemptBudget } from '../auth/attempt-budget.js';
import type { CallResult } from '../families/dispatch.js';
import type { FamilyRegistry } from '../families/registry.js';
import type { Settings } from '../settings/load.js';

/** What a surface gets from the host (the composition root builds it). */
export interface SurfaceDeps {
  readonly db: Kysely<any>;
  readonly settings: () => Settings;
  readonly log: Logger;
  /** Cookies are Secure when server.publicUrl is https. */
  readonly secure: boolean;
  /** The operator operations (the CLI and the admin channel run the same ones). */
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
  /**
   * Several processes: run an admin-channel command (POST `path`, such as /v1/index) at the owner of a vault
   * this process does not own, as its local operator, handing each line of the answer (progress, then
   * {done} or {error}) to `onLine`; false when this process owns the vault (run it here instead).
   */
  readonly atOwner?: (
    vaultId: number,
    path: string,
    body: unknown,
    onLine: (line: Record<string, unknown>) => void,
  ) => Promise<boolean>;
}

export interface HttpSurface {
  /** For logs and errors (e.g. "panel"). */
  readonly name: string;
  /** Whether the settings turn it on (read once, when the host listens). */
  enabled(settings: Settings): boolean;
  /** Add its routes to the host's Fastify app, before the MCP routes. */
  register(app: FastifyInstance, deps: SurfaceDeps): Promise<void>;
}
