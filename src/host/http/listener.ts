// The host's HTTP listener: builds the Fastify app from the host's parts (MCP routes, /health with detail
// for operators only, /metrics, the authorization server, the HTTP surfaces clients of the host pass in),
// and the credential checks it shares with the admin channel and the cluster forwarder.
import type { AddressInfo } from 'node:net';
import type { Principal } from '../../sdk/types.js';
import { KEY_PREFIX } from '../auth/api-keys.js';
import { SESSION_COOKIE, sessionUser } from '../auth/panel-sessions.js';
import { userByName } from '../auth/users.js';
import type { Host } from '../host.js';
import { registerForwardedIndex } from '../admin/channel-server.js';
import { buildHttpApp } from './app.js';
import type { HttpSurface } from './surfaces.js';

/** Start the HTTP listener (MCP, /health, /metrics, OAuth, the surfaces its settings turn on); returns the session reaper. */
export async function listenHttp(host: Host, surfaces: readonly HttpSurface[]): Promise<NodeJS.Timeout> {
  const s = host.settings.host.server;
  const mount = surfaces.filter((surface) => surface.enabled(host.settings));
  host.app = await buildHttpApp({
    mode: s.mode,
    maxSessions: s.maxSessions,
    maxSessionsPerCredential: s.maxSessionsPerCredential,
    maxListenStreams: s.maxListenStreams,
    forwarder: host.forwarder,
    connection: s,
    verifier: credentialsOf(host),
    oauth: host.oauth,
    hub: host.hub,
    deps: host.serverDeps,
    log: host.log,
    bodyLimitBytes: requestBodyLimit(host),
    registry: host.manager.registry,
    allowedHosts: s.allowedHosts,
    allowedOrigins: s.allowedOrigins,
    publicUrl: s.publicUrl,
    health: () => host.health(),
    isOperator: (authorization, cookie) => isOperator(host, authorization, cookie),
    metricsEndpoint: host.metrics ? { registry: host.metrics, access: host.settings.host.metrics } : undefined,
    surfaces: mount.length
      ? {
          mount,
          deps: {
            db: host.database.db,
            settings: () => host.settings,
            log: host.log,
            secure: s.publicUrl?.startsWith('https:') ?? false,
            operations: () => host.operations,
            registry: host.manager.registry,
            callTool: (principal, tool, args) => host.dispatcher.call(principal, tool, args),
            health: () => host.health(),
            signInBudget: host.signInBudget,
            startedAt: host.startedAt,
            route: host.forwarder
              ? (id, request, reply, write) => host.forwarder!.route(request, reply, id, { write })
              : undefined,
            atOwner: host.forwarder
              ? (id, path, body, onLine) => host.forwarder!.runOperatorCommand(id, path, body, onLine)
              : undefined,
          },
        }
      : undefined,
  });
  if (host.forwarder) registerForwardedIndex(host.app, { forwarder: host.forwarder, target: () => host.operations });
  await host.app.listen({ host: s.host, port: s.port });
  const reaper = setInterval(() => void host.hub.reap(s.sessionIdleMinutes * 60_000), 60_000);
  reaper.unref();
  return reaper;
}

/** A bearer credential (API key, OAuth token) or a panel session cookie of an enabled admin user. */
async function isOperator(host: Host, authorization: string | undefined, cookie: string | undefined): Promise<boolean> {
  const raw = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  if (raw) {
    const principal = await credentialsOf(host)
      .verify(raw)
      .catch(() => undefined);
    if (!principal) return false;
    const user = await userByName(host.database.db, principal.user);
    return user?.isAdmin === true && !user.disabledAt;
  }
  const session = (cookie ?? '')
    .split(';')
    .map((c) => c.trim().split('='))
    .find(([name]) => name === SESSION_COOKIE)?.[1];
  return session ? (await sessionUser(host.database.db, session))?.admin === true : false;
}

/** API keys (exo_…) and, when the authorization server is offered, its access tokens. */
export function credentialsOf(host: Host): { verify(raw: string | undefined): Promise<Principal> } {
  const oauth = host.oauth;
  return {
    verify: (raw) =>
      !oauth || !raw || raw.startsWith(KEY_PREFIX) ? host.verifier.verify(raw) : oauth.tokens.verify(raw),
  };
}

/** server.bodyLimitBytes, raised to what serving families declare they need (fixed at listen). */
export function requestBodyLimit(host: Host): number {
  let limit = host.settings.host.server.bodyLimitBytes;
  for (const gen of host.manager.registry.generations.values()) {
    const need = gen.family.requestBodyBytes?.(gen.settings);
    if (need && Number.isFinite(need)) limit = Math.max(limit, need);
  }
  return limit;
}

/** The base URL the server listens on (for tests and the first-start message). */
export function listenUrl(host: Host): string {
  const addr = host.app?.server.address() as AddressInfo | null;
  if (!addr) return '';
  const name = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return `http://${name}:${addr.port}`;
}
