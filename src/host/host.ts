// The composition root: opens the database and every served vault, wires admission, audit, workers, the
// family loader and the transports, and owns hot reload (config file watch, SIGHUP) and shutdown.
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { ListEvents, Logger, Principal, VaultHandle } from '../sdk/types.js';
import type { HealthBacklog } from '../sdk/define-family.js';
import type { VaultFs } from '../sdk/vault.js';
import { openAdminChannel, type AdminChannel } from './admin/channel-server.js';
import type { OperationTarget } from './admin/operations.js';
import { adminSocketPath } from './admin/protocol.js';
import { Admission, effectiveLimits, type WriteCallGauge } from './admission/index.js';
import { DatabaseQuota } from './admission/quota.js';
import type { HostMetrics } from './metrics/index.js';
import {
  ApiKeyVerifier,
  closedCredentials,
  KEY_PREFIX,
  KEYS_CHANGED_CHANNEL,
  notifyCredentialsChanged,
} from './auth/api-keys.js';
import { registrationBudget, signInBudget, type AttemptBudget } from './auth/attempt-budget.js';
import { ensureOperator, listUsers, userByName } from './auth/users.js';
import { SESSION_COOKIE, sessionUser } from './auth/panel-sessions.js';
import { ensureVault, listVaults } from './auth/vaults.js';
import { Forwarder } from './cluster/forward.js';
import { checkFence, VaultLeases } from './cluster/leases.js';
import { storedSecret } from './db/stored-secret.js';
import { AuditWriter } from './audit/batch-writer.js';
import { migrateHost, openDatabase, pgliteMemoryOf, type DatabaseService } from './db/index.js';
import { ToolDispatcher } from './families/dispatch.js';
import type { HostServices } from './families/host-services.js';
import { FamilyManager, type ApplyResult } from './families/manager.js';
import { buildHttpApp } from './http/app.js';
import type { HttpSurface } from './http/surfaces.js';
import type { OAuthServer } from './oauth/server.js';
import type { ProviderOptions } from './oauth/provider.js';
import type { IndexPipeline } from './index/index.js';
import { createLogger } from './log/logger.js';
import type { ServerDeps } from './mcp/server-factory.js';
import { RequestStateSeal } from './mcp/request-state.js';
import { SessionHub } from './mcp/sessions.js';
import { ResourceSubscriptions } from './mcp/subscriptions.js';
import { loadSettings, resolvePath, SettingsError, type Settings } from './settings/load.js';
import { restartOnlyChanges } from './settings/schema.js';
import { applyDeclared, DeclaredConflict, type DeclaredChanges } from './vaults/declared.js';
import { VaultRegistry } from './vaults/registry.js';
import { PiscinaPool } from './workers/pool.js';
import { PACKAGE_VERSION } from './package-info.js';

export interface HostOptions {
  readonly settings: Settings;
  /** Start the HTTP server (serve) or not (stdio, CLI commands). */
  readonly http?: boolean;
  readonly log?: Logger;
  /** Folder of built-in families (tests point this elsewhere). */
  readonly builtinDir?: string;
  /** Open the admin channel for the CLI and stdio bridges (default: wherever a socket path is known). */
  readonly admin?: boolean;
  /** How the lock file and the admin hello name this process (e.g. "exocortex serve"). */
  readonly command?: string;
  /** Test-only seams for the OAuth client metadata fetch (never set from configuration). */
  readonly oauthFetchSeams?: ProviderOptions['fetchSeams'];
  /**
   * Pages clients of the host mount on its HTTP listener, each when its settings turn it on (the CLI's
   * serve passes the operator panel); the host imports none of them.
   */
  readonly surfaces?: readonly HttpSurface[];
}

export const WELCOME_NOTE = `# Welcome to your vault

This folder is served by Exocortex, so AI agents you connect can read, search and carefully
edit these notes with you.

- Link notes with \`[[Welcome]]\`-style wikilinks; tag them with \`#tags\`.
- Write a \`CLAUDE.md\` (or \`AGENTS.md\`) here to tell agents how this vault is organised.
- Deleted notes go to \`.trash/\`, and no write replaces a note it has not checked.
`;

export class Host {
  readonly hub: SessionHub;
  readonly subscriptions: ResourceSubscriptions;
  /**
   * Seals input-needed requestState for every MCP instance this process serves (with a PostgreSQL
   * server, under a key every process shares, so any process opens a round another one sealed).
   */
  requestStates = new RequestStateSeal();
  /** Vault leases and forwarding, when several processes may share a PostgreSQL server. */
  leases: VaultLeases | undefined;
  forwarder: Forwarder | undefined;
  readonly manager: FamilyManager;
  readonly dispatcher: ToolDispatcher;
  readonly verifier: ApiKeyVerifier;
  readonly audit: AuditWriter;
  readonly workers: PiscinaPool;
  app: FastifyInstance | undefined;
  /** Every vault this process serves, each with its own index pipeline. */
  readonly vaults: VaultRegistry;
  /** The vault.path vault (the operator's); set by start() before anything is served. */
  vaultHandle!: VaultHandle;
  /** The admin channel's socket, when this process opened one. */
  admin: AdminChannel | undefined;
  /** The embedded authorization server, when offered (server.publicUrl set and oauth.enabled). */
  oauth: OAuthServer | undefined;
  private watcher: FSWatcher | undefined;
  /** Stops listening for revocations made by other processes sharing a server database. */
  private stopKeyListener: (() => Promise<void>) | undefined;
  private reloadTimer: NodeJS.Timeout | undefined;
  private reaper: NodeJS.Timeout | undefined;
  private readonly onSighup = () => void this.reload();
  private closed = false;
  readonly startedAt = Date.now();
  /** Write-class tool calls in flight per vault (the index's group commit waits for them). */
  readonly writeCalls: WriteCallGauge;
  private readonly admission: Admission;
  /** Prometheus metrics, when metrics.enabled. */
  readonly metrics: HostMetrics | undefined;
  /** Failed sign-ins per address, one budget for the panel and the OAuth pages (rows in the database). */
  readonly signInBudget: AttemptBudget;
  /** Dynamic client registrations per address per hour (rows in the database). */
  readonly registrationBudget: AttemptBudget;

  private constructor(
    public settings: Settings,
    readonly log: Logger,
    readonly database: DatabaseService,
    /** The id of the vault.path vault: the implicit operator user's. */
    readonly defaultVaultId: number,
    readonly services: HostServices,
    builtinDir: string | undefined,
    leases?: VaultLeases,
    /** The metrics module, loaded only when metrics.enabled (prom-client costs memory and start-up). */
    metricsModule?: typeof import('./metrics/index.js'),
  ) {
    const h = settings.host;
    this.workers = services.workers as PiscinaPool;
    this.hub = new SessionHub(log);
    this.subscriptions = new ResourceSubscriptions(log, h.server.maxSubscriptionsPerSession, this.hub.listenBuses);
    services.named.set('resource-events', this.subscriptions);
    const lists: ListEvents = {
      toolsChanged: () => this.hub.broadcast({ tools: true, prompts: false, resources: false }),
      promptsChanged: () => this.hub.broadcast({ tools: false, prompts: true, resources: false }),
      resourcesChanged: () => this.hub.broadcast({ tools: false, prompts: false, resources: true }),
    };
    services.named.set('list-events', lists);
    this.manager = new FamilyManager(services, builtinDir);
    services.named.set('write-observers', this.manager.registry.observersService());
    this.manager.registry.vaultReadOnly = h.vault.readOnly;
    this.manager.registry.profile = h.tools.profile;
    this.audit = new AuditWriter(database.db, h.audit, log);
    this.verifier = new ApiKeyVerifier(database.db, h.auth.keyCacheSeconds * 1000);
    this.signInBudget = signInBudget(database.db, () => this.settings.host.oauth);
    this.registrationBudget = registrationBudget(database.db, () => this.settings.host.oauth);
    const admission = new Admission(h.admission, new DatabaseQuota(database.db));
    this.admission = admission;
    this.writeCalls = admission.writeCalls;
    const lookup = (name: string) =>
      services.named.has(name) ? services.named.get(name) : this.manager.registry.providedService(name);
    const has = (name: string) => services.named.has(name) || this.manager.registry.providedService(name) !== undefined;
    this.dispatcher = new ToolDispatcher(this.manager.registry, admission, this.audit, services, h.tools, lookup, has);
    this.manager.registry.on('changed', (change) => this.hub.broadcast(change));
    this.vaults = new VaultRegistry({
      db: database.db,
      workers: this.workers,
      log,
      index: h.index,
      open: {
        allowNamedStaging: h.vault.allowNamedStaging,
        allowHardLinks: h.vault.allowHardLinks,
        openWriterWaitMs: h.vault.openWriterWaitMs,
      },
      readOnly: h.vault.readOnly,
      obsidianName: (row) => (row.id === defaultVaultId ? h.vault.obsidianName : null),
      contributors: () => this.manager.registry.contributors(),
      writeCalls: this.writeCalls,
      ownership: leases
        ? {
            owns: (id) => leases.owns(id),
            epoch: (id) => leases.epoch(id),
            fence: (id) => (trx) => checkFence(trx, id, leases.processId, leases.epoch(id) ?? -1),
          }
        : undefined,
    });
    this.leases = leases;
    this.manager.registry.on('changed', () => this.vaults.contributorsChanged());
    if (h.metrics.enabled && metricsModule) {
      const metrics = new metricsModule.HostMetrics({
        sessions: () => this.hub.size,
        subscriptions: () => this.subscriptions.count(),
        listenStreams: () => this.hub.streamCount,
        vaults: () => this.vaults.health(),
        workers: () => this.workers.stats(),
        audit: () => ({ pending: this.audit.pending, written: this.audit.written, dropped: this.audit.dropped }),
        pool: () => this.database.pool.counts(),
        familyHealth: () => this.familyHealthByVault(),
        backlogs: () => this.healthBacklogs(),
        leases: leases ? () => ({ owned: leases.ownedVaults().length, ...leases.counters }) : undefined,
      });
      this.database.pool.onWait = (seconds) => metrics.poolWait(seconds);
      this.metrics = metrics;
      this.dispatcher.onCall = (tool, seconds, outcome, code) => metrics.toolCall(tool, seconds, outcome, code);
    }
  }

  /** The index pipeline of the vault.path vault (tests and the CLI's index pass). */
  get index(): IndexPipeline | undefined {
    return this.vaults.get(this.defaultVaultId)?.index;
  }

  static async start(options: HostOptions): Promise<Host> {
    const settings = options.settings;
    const h = settings.host;
    const log = options.log ?? createLogger(h.log.level);
    const vaultRoot = resolvePath(settings, h.vault.path);
    const database = await openDatabase(h.database.url, {
      baseDir: settings.baseDir,
      poolSize: h.database.poolSize,
      pgliteThread: h.database.pgliteThread,
      pgliteMaintenanceSeconds: h.database.pgliteMaintenanceSeconds,
      pgliteMemory: pgliteMemoryOf(h.database),
      log,
    });
    let host: Host | undefined;
    try {
      await migrateHost(database.db);
      const vaultId = await ensureVault(database.db, h.vault.name, vaultRoot, {
        adoptRoot: { log },
        refuseRootChange: database.engine.kind === 'postgres',
      });
      await ensureOperator(database.db, vaultId);
      await applyDeclaredOrRefuse(database, settings, { name: h.vault.name, id: vaultId });
      const workers = new PiscinaPool(h.workers);
      const services: HostServices = {
        database,
        workers,
        log,
        server: { publicUrl: h.server.publicUrl, databaseEngine: database.engine.kind },
        vault: (id) => host!.vaults.handle(id ?? vaultId),
        routeByVault: (id, request, reply, write, family) =>
          host?.forwarder ? host.forwarder.route(request, reply, id, { write, family }) : Promise.resolve(false),
        clientAddress: (request) => host?.forwarder?.clientAddress(request) ?? request.ip,
        named: new Map<string, unknown>([
          ['db', database.db],
          ['workers', workers],
          ['vaults', { get: (id?: number) => host!.vaults.find(id ?? vaultId) }],
        ]),
      };
      // A PostgreSQL server may be shared by several processes: each vault is then served by the one
      // holding its lease (cluster/leases.ts); an embedded database has one process by construction.
      const leases =
        database.engine.kind === 'postgres'
          ? new VaultLeases({
              url: h.database.url,
              db: database.db,
              log,
              internalUrl: () => host?.internalUrl() ?? null,
              bid: h.cluster.ownVaults && options.http === true,
              intervalMs: h.cluster.leaseIntervalMs,
              canServe: (id) => host!.canServeVault(id),
              acquired: (id) => host!.vaultOwnershipChanged(id, true),
              lost: (id) => host!.vaultOwnershipChanged(id, false),
              drain: (id) => host!.drainWrites(id),
            })
          : undefined;
      const metricsModule = h.metrics.enabled ? await import('./metrics/index.js') : undefined;
      host = new Host(settings, log, database, vaultId, services, options.builtinDir, leases, metricsModule);
      if (leases) {
        const { key } = await storedSecret(database.db, 'request-state-key', () => ({
          key: randomBytes(32).toString('base64'),
        }));
        host.requestStates = new RequestStateSeal(Buffer.from(key, 'base64'));
      }
      services.named.set('index', host.vaults.indexService);
      // Pipelines start only once the families are serving, so the first pass runs with every contributor.
      host.vaults.hold();
      const rows = await listVaults(database.db);
      const served = await host.vaults.serve(rows.find((r) => r.id === vaultId)!, {
        strict: true,
        prepare: h.vault.readOnly ? undefined : (fs) => seedWelcomeNote(fs, log),
      });
      host.vaultHandle = served.handle!;
      for (const row of rows) if (row.id !== vaultId) await host.vaults.serve(row);
      const first = await host.manager.apply(settings);
      if (!first.ok) throw new SettingsError(first.errors);
      host.vaults.release();
      await host.pruneRemovedVaults();
      host.vaults.startChecks(h.index.rootCheckSeconds);
      const h2 = host;
      await host.reloadUserLimits();
      host.stopKeyListener = await database.engine.listen(KEYS_CHANGED_CHANNEL, (payload) => {
        h2.credentialsChanged();
        const close = closedCredentials(payload);
        if (close.length) void h2.hub.closeFor(new Set(close));
      });
      if (options.http && h.oauth.enabled && h.server.publicUrl) {
        const { OAuthServer } = await import('./oauth/server.js');
        host.oauth = await OAuthServer.start({
          db: database.db,
          log,
          publicUrl: h.server.publicUrl,
          settings: h.oauth,
          signInBudget: host.signInBudget,
          registrationBudget: host.registrationBudget,
          fetchSeams: options.oauthFetchSeams,
        });
      }
      if (leases && options.http) {
        const { key: hopKey } = await storedSecret(database.db, 'cluster-hop-key', () => ({
          key: randomBytes(32).toString('base64'),
        }));
        const h3 = host;
        host.forwarder = new Forwarder({
          leases,
          key: Buffer.from(hopKey, 'base64'),
          ceiling: () => h3.scopeCeiling(),
          families: () => [...h3.manager.registry.generations.keys()],
          log,
          metrics: h3.metrics,
          bodyLimitBytes: h3.requestBodyLimit(),
          operator: (id) => ({ ...h3.operator, vaultId: id }),
        });
      }
      if (options.http) await host.listen(options.surfaces ?? []);
      // Bid only once this process can be reached: a vault it wins is forwarded to at once.
      await leases?.start();
      const socketPath = options.admin === false ? undefined : adminSocketPath(settings);
      if (socketPath) await host.openAdmin(socketPath, options.command ?? 'exocortex');
      host.watchConfig();
      return host;
    } catch (e) {
      if (host) await host.close();
      else await database.close();
      throw e;
    }
  }

  /** Everything an operator command needs from this process (the admin channel and the CLI share it). */
  get operations(): OperationTarget {
    const index = this.index;
    return {
      db: this.database.db,
      vault: this.vaultHandle,
      vaults: this.vaults,
      settings: this.settings,
      log: this.log,
      manager: this.manager,
      index,
      forgetKeys: () => this.credentialsChanged(),
      closeSessionsOf: async (credentialIds) => {
        // Other processes sharing a server database hold sessions and streams of these credentials too.
        if (this.leases) await notifyCredentialsChanged(this.database.db, [...credentialIds]);
        return this.hub.closeFor(credentialIds);
      },
      vaultsRemoved: () => this.pruneRemovedVaults(),
    };
  }

  private async openAdmin(socketPath: string, command: string): Promise<void> {
    this.admin = await openAdminChannel({
      socketPath,
      target: () => this.operations,
      hub: this.hub,
      deps: this.serverDeps,
      operator: this.operator,
      log: this.log,
      maxSessions: this.settings.host.server.maxSessions,
      command,
      health: () => this.health(),
      bodyLimitBytes: this.requestBodyLimit(),
      forwarder: this.forwarder,
    });
  }

  get operator(): Principal {
    return {
      kind: 'operator',
      id: 'operator',
      name: 'local operator',
      user: 'operator',
      vaultId: this.vaultHandle.id,
      scopes: ['read', 'readwrite'],
    };
  }

  get serverDeps(): ServerDeps {
    return {
      registry: this.manager.registry,
      dispatcher: this.dispatcher,
      vaultName: (id) => this.vaults.find(id)?.name ?? 'vault',
      subscriptions: this.subscriptions,
      requestStates: this.requestStates,
    };
  }

  private async listen(surfaces: readonly HttpSurface[]): Promise<void> {
    const s = this.settings.host.server;
    const mount = surfaces.filter((surface) => surface.enabled(this.settings));
    this.app = await buildHttpApp({
      mode: s.mode,
      maxSessions: s.maxSessions,
      maxSessionsPerCredential: s.maxSessionsPerCredential,
      maxListenStreams: s.maxListenStreams,
      forwarder: this.forwarder,
      connection: s,
      verifier: this.credentials,
      oauth: this.oauth,
      hub: this.hub,
      deps: this.serverDeps,
      log: this.log,
      bodyLimitBytes: this.requestBodyLimit(),
      registry: this.manager.registry,
      allowedHosts: s.allowedHosts,
      allowedOrigins: s.allowedOrigins,
      publicUrl: s.publicUrl,
      health: () => this.health(),
      isOperator: (authorization, cookie) => this.isOperator(authorization, cookie),
      metricsEndpoint: this.metrics ? { registry: this.metrics, access: this.settings.host.metrics } : undefined,
      surfaces: mount.length
        ? {
            mount,
            deps: {
              db: this.database.db,
              settings: () => this.settings,
              log: this.log,
              secure: s.publicUrl?.startsWith('https:') ?? false,
              operations: () => this.operations,
              registry: this.manager.registry,
              callTool: (principal, tool, args) => this.dispatcher.call(principal, tool, args),
              health: () => this.health(),
              signInBudget: this.signInBudget,
              startedAt: this.startedAt,
              route: this.forwarder
                ? (id, request, reply, write) => this.forwarder!.route(request, reply, id, { write })
                : undefined,
            },
          }
        : undefined,
    });
    await this.app.listen({ host: s.host, port: s.port });
    this.reaper = setInterval(() => void this.hub.reap(s.sessionIdleMinutes * 60_000), 60_000);
    this.reaper.unref();
  }

  /** A bearer credential (API key, OAuth token) or a panel session cookie of an enabled admin user. */
  private async isOperator(authorization: string | undefined, cookie: string | undefined): Promise<boolean> {
    const raw = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    if (raw) {
      const principal = await this.credentials.verify(raw).catch(() => undefined);
      if (!principal) return false;
      const user = await userByName(this.database.db, principal.user);
      return user?.isAdmin === true && !user.disabledAt;
    }
    const session = (cookie ?? '')
      .split(';')
      .map((c) => c.trim().split('='))
      .find(([name]) => name === SESSION_COOKIE)?.[1];
    return session ? (await sessionUser(this.database.db, session))?.admin === true : false;
  }

  /** API keys (exo_…) and, when the authorization server is offered, its access tokens. */
  private get credentials(): { verify(raw: string | undefined): Promise<Principal> } {
    const oauth = this.oauth;
    return {
      verify: (raw) =>
        !oauth || !raw || raw.startsWith(KEY_PREFIX) ? this.verifier.verify(raw) : oauth.tokens.verify(raw),
    };
  }

  /** server.bodyLimitBytes, raised to what serving families declare they need (fixed at listen). */
  private requestBodyLimit(): number {
    let limit = this.settings.host.server.bodyLimitBytes;
    for (const gen of this.manager.registry.generations.values()) {
      const need = gen.family.requestBodyBytes?.(gen.settings);
      if (need && Number.isFinite(need)) limit = Math.max(limit, need);
    }
    return limit;
  }

  /** The base URL the server listens on (for tests and the first-start message). */
  get url(): string {
    const addr = this.app?.server.address() as AddressInfo | null;
    if (!addr) return '';
    const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    return `http://${host}:${addr.port}`;
  }

  private watchConfig(): void {
    process.on('SIGHUP', this.onSighup);
    const file = this.settings.file;
    if (!file || !this.settings.host.reload.watchConfig) return;
    const dir = path.dirname(file);
    const base = path.basename(file);
    try {
      this.watcher = watch(dir, (_event, name) => {
        if (name !== base) return;
        clearTimeout(this.reloadTimer);
        this.reloadTimer = setTimeout(() => void this.reload(), 150);
      });
      this.watcher.unref();
    } catch (e) {
      this.log.warn({ err: String(e) }, 'config file cannot be watched; use SIGHUP to reload');
    }
  }

  /** Reloads run one at a time (a SIGHUP and a file change may come together). */
  private reloading: Promise<unknown> = Promise.resolve();

  /** Re-read the config file and apply vault, user and family changes. A bad file keeps the current ones. */
  reload(): Promise<ApplyResult> {
    const next = this.reloading.then(() => this.reloadNow());
    this.reloading = next.catch(() => undefined);
    return next;
  }

  private async reloadNow(): Promise<ApplyResult> {
    if (this.closed) return { ok: false, errors: ['host is closed'], booted: [], closed: [] };
    let next: Settings;
    try {
      next = loadSettings({ file: this.settings.file, cwd: this.settings.baseDir });
    } catch (e) {
      const errors = e instanceof SettingsError ? [...e.problems] : [String(e)];
      this.log.error({ errors }, 'config reload refused; the previous configuration keeps serving');
      const result = { ok: false, errors, booted: [], closed: [] };
      this.manager.lastResult = { ...result, at: new Date().toISOString() };
      return result;
    }
    const restartOnly = restartOnlyChanges(this.settings.host, next.host);
    if (restartOnly.length) this.log.warn({ keys: restartOnly }, 'these settings change only on restart');
    try {
      await this.applyVaultChanges(
        await applyDeclared(this.database.db, next.host, (p) => resolvePath(next, p), {
          name: this.settings.host.vault.name,
          id: this.defaultVaultId,
        }),
      );
    } catch (e) {
      if (!(e instanceof DeclaredConflict)) throw e;
      this.log.error(
        { errors: e.problems },
        'config reload refused: its vaults or users contradict the database; the previous configuration keeps serving',
      );
      const result = { ok: false, errors: [...e.problems], booted: [], closed: [] };
      this.manager.lastResult = { ...result, at: new Date().toISOString() };
      return result;
    }
    const result = await this.manager.apply(next);
    if (result.ok) this.settings = next;
    return result;
  }

  /** Start and stop pipelines for what the config file's vaults and users changed. */
  private async applyVaultChanges(changes: DeclaredChanges): Promise<void> {
    for (const id of [...changes.removed, ...changes.restart]) await this.vaults.stop(id);
    for (const row of changes.serve) await this.vaults.serve(row);
    if (changes.usersChanged || changes.removed.length) this.credentialsChanged();
    if (changes.removed.length) await this.pruneRemovedVaults();
  }

  /** Each serving family drops its rows of vaults that no longer exist (its `pruneVaults`). */
  async pruneRemovedVaults(): Promise<void> {
    const remaining = (await listVaults(this.database.db)).map((v) => v.id);
    for (const gen of this.manager.registry.generations.values()) {
      if (!gen.family.pruneVaults) continue;
      try {
        await gen.family.pruneVaults(this.database.db, remaining);
      } catch (e) {
        this.log.warn(
          { family: gen.name, err: String(e) },
          'rows of removed vaults not pruned; the next start tries again',
        );
      }
    }
  }

  /** Keys, users or their limits changed (here or in another process): drop cached keys, re-read limits. */
  private credentialsChanged(): void {
    this.verifier.forget();
    this.reloadUserLimits().catch((e) =>
      this.log.warn({ err: String(e) }, 'user limits not re-read; the previous ones apply'),
    );
  }

  /** Every user's limits (the operator's per-user defaults with each user's own over them), for admission. */
  private async reloadUserLimits(): Promise<void> {
    const defaults = this.settings.host.admission.perUser;
    const own = new Map((await listUsers(this.database.db)).map((u) => [u.name, effectiveLimits(defaults, u.limits)]));
    this.admission.limitsOf = (user) => own.get(user) ?? defaults;
    this.admission.usersChanged();
    this.hub.sessionsPerUser = (user) => (own.get(user) ?? defaults).sessions;
  }

  /** Where other processes forward this one's vaults' calls (cluster.internalUrl, else the listen address). */
  internalUrl(): string | null {
    const configured = this.settings.host.cluster.internalUrl;
    if (configured) return configured.replace(/\/$/, '');
    const addr = this.app?.server.address() as AddressInfo | null;
    if (!addr) return null;
    const unspecified = addr.address === '0.0.0.0' || addr.address === '::';
    const host = unspecified ? '127.0.0.1' : addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    return `http://${host}:${addr.port}`;
  }

  /** The most a call forwarded from here may do: each serving family, read-only where this process is. */
  scopeCeiling(): string[] {
    const registry = this.manager.registry;
    return [...registry.generations.values()].map(
      (g) => `${g.name}:${registry.vaultReadOnly || g.readOnly ? 'read' : 'write'}`,
    );
  }

  /** Whether this process can serve a vault (its root opens here); a vault added elsewhere is opened now. */
  async canServeVault(id: number): Promise<boolean> {
    if (!this.vaults.get(id)) {
      const row = (await listVaults(this.database.db)).find((r) => r.id === id);
      if (!row) return false;
      await this.vaults.serve(row);
    }
    return this.vaults.canServe(id);
  }

  /** Wait (bounded) until no write call is in flight on a vault here: a vault handed back finishes its writes first. */
  async drainWrites(id: number): Promise<void> {
    const deadline = Date.now() + HANDBACK_DRAIN_MS;
    while (this.writeCalls.inFlight(id) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  }

  /** The lease of a vault was won or lost: start its pipeline here, or stop it and hold the vault on standby. */
  async vaultOwnershipChanged(id: number, owned: boolean): Promise<void> {
    // Another process records and announces this vault's changes from now on: end what listens here.
    if (!owned) await this.hub.closeVault(id);
    if (this.closed) return this.vaults.stop(id);
    // The database may be what went away (a restart took the lease): the row this process holds will do.
    const rows = await listVaults(this.database.db).catch(() => []);
    const row = rows.find((r) => r.id === id) ?? this.vaults.get(id)?.row;
    if (!row) return;
    const entry = await this.vaults.serve(row, {
      // A lost lease always stops the pipeline, even if the vault was won back meanwhile: the new one
      // starts with a scan under the new epoch, so nothing the old one could not commit is dropped.
      restart: !owned,
      prepare:
        owned && id === this.defaultVaultId && !this.settings.host.vault.readOnly
          ? (fs) => seedWelcomeNote(fs, this.log)
          : undefined,
    });
    if (owned && entry.state !== 'serving') throw new Error(entry.reason ?? 'the vault cannot be served here');
  }

  async health(): Promise<Record<string, unknown>> {
    const dbOk = await this.database.ping();
    const families: Record<string, string> = {};
    const reasons: Record<string, string> = {};
    let degraded = false;
    for (const [name, st] of this.manager.registry.status) {
      families[name] = st.state;
      if (st.reason) reasons[name] = redact(st.reason);
      if (st.state === 'failed' || st.state === 'unavailable' || st.reason) degraded = true;
    }
    const last = this.manager.lastResult;
    if (last && !last.ok) degraded = true;
    const caps = this.vaultHandle.fs.capabilities;
    const byVault = await this.familyHealthByVault();
    const familyHealth = byVault[this.vaultHandle.name] ?? {};
    const vaults = this.vaults.health();
    for (const v of Object.values(vaults)) if (v.state === 'unavailable') degraded = true;
    const owners = this.leases ? await this.leases.ownersByVault().catch(() => undefined) : undefined;
    return {
      status: !dbOk ? 'down' : degraded ? 'degraded' : 'ok',
      version: PACKAGE_VERSION,
      uptimeSeconds: Math.round((Date.now() - this.startedAt) / 1000),
      db: dbOk ? 'ok' : 'down',
      engine: this.database.engine.kind,
      families,
      ...(Object.keys(reasons).length ? { familyReasons: reasons } : {}),
      tools: this.manager.registry.listTools(this.operator).length,
      ...(Object.keys(familyHealth).length ? { familyHealth } : {}),
      sessions: this.hub.size,
      reload: last ? { ok: last.ok, at: last.at, errors: last.errors.map(redact) } : null,
      vault: { engine: caps.engine, namedStaging: caps.namedStaging },
      audit: { pending: this.audit.pending, written: this.audit.written, dropped: this.audit.dropped },
      workers: this.workers.stats(),
      index: this.index?.healthSummary() ?? null,
      ...(this.leases
        ? {
            cluster: {
              process: this.leases.processId,
              owned: this.leases.ownedVaults().length,
              leases: this.leases.counters,
              forwards: this.forwarder?.counts ?? null,
            },
          }
        : {}),
      vaults: Object.fromEntries(
        Object.entries(vaults).map(([name, v]) => [
          name,
          {
            ...v,
            ...(byVault[name] && Object.keys(byVault[name]).length ? { familyHealth: byVault[name] } : {}),
            ...(v.reason ? { reason: redact(v.reason) } : {}),
            ...(v.lastError ? { lastError: redact(v.lastError) } : {}),
            ...(owners
              ? ownerFields(owners, this.leases!, this.vaults.all().find((e) => e.row.name === name)?.row.id)
              : {}),
          },
        ]),
      ),
    };
  }

  /**
   * Each serving family's own counts (its `health` hook) for every served vault, by vault name then
   * family; each call bounded by a short deadline (all run at once). One read serves a whole /health
   * answer or /metrics scrape.
   */
  async familyHealthByVault(): Promise<Record<string, Record<string, unknown>>> {
    const gens = [...this.manager.registry.generations.values()].filter((g) => g.family.health);
    const vaults = new Map<number, string>([[this.vaultHandle.id, this.vaultHandle.name]]);
    for (const v of this.vaults.all()) if (v.handle) vaults.set(v.row.id, v.row.name);
    const out: Record<string, Record<string, unknown>> = {};
    for (const name of vaults.values()) out[name] = {};
    await Promise.all(
      [...vaults].flatMap(([vaultId, vaultName]) =>
        gens.map(async (g) => {
          const ctx = { vaultId, db: this.database.db, ...g.services() };
          const timeout = new Promise<never>((_, reject) =>
            setTimeout(() => reject(new Error('timeout')), FAMILY_HEALTH_TIMEOUT_MS).unref(),
          );
          try {
            out[vaultName][g.name] = await Promise.race([g.family.health!(ctx), timeout]);
          } catch {
            out[vaultName][g.name] = { error: 'unavailable' };
          }
        }),
      ),
    );
    return out;
  }

  /** The backlogs serving families declare (`healthBacklog`): which health fields to sum, per family. */
  healthBacklogs(): Array<HealthBacklog & { family: string }> {
    return [...this.manager.registry.generations.values()].flatMap((g) =>
      g.family.healthBacklog ? [{ family: g.name, ...g.family.healthBacklog }] : [],
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    process.off('SIGHUP', this.onSighup);
    clearTimeout(this.reloadTimer);
    clearInterval(this.reaper);
    this.watcher?.close();
    await this.admin?.close();
    this.oauth?.close();
    await this.stopKeyListener?.();
    await this.hub.closeAll();
    // Give the leases back before the pipelines stop: a successor can take over at once.
    await this.leases?.close();
    if (this.app) await this.app.close().catch(() => undefined);
    this.forwarder?.close();
    await this.vaults.close();
    await this.manager.close();
    await this.audit.close();
    await this.workers.close();
    await this.database.close();
  }
}

/** The config file's vaults and users, or a SettingsError naming each contradiction with the database. */
async function applyDeclaredOrRefuse(
  database: DatabaseService,
  settings: Settings,
  implicit: { name: string; id: number },
): Promise<void> {
  try {
    await applyDeclared(database.db, settings.host, (p) => resolvePath(settings, p), implicit);
  } catch (e) {
    if (e instanceof DeclaredConflict) throw new SettingsError(e.problems);
    throw e;
  }
}

/** A vault's owner process (by its lease) and the epoch under which this process owns it (null: it does not). */
function ownerFields(
  owners: ReadonlyMap<number, { owner: string }>,
  leases: VaultLeases,
  id: number | undefined,
): { owner: string | null; leaseEpoch: number | null } {
  return { owner: owners.get(id ?? -1)?.owner ?? null, leaseEpoch: leases.epoch(id ?? -1) ?? null };
}

/** How long /health waits for one family's counts. */
const FAMILY_HEALTH_TIMEOUT_MS = 1000;
/** How long a vault handed back to rebalance waits for its write calls in flight before its pipeline stops. */
const HANDBACK_DRAIN_MS = 5000;

/** Strip absolute paths from messages shown on /health. */
function redact(text: string): string {
  return text.replace(/(?:file:\/\/)?\/[^\s'",;)]+/g, '<path>');
}

async function seedWelcomeNote(fs: VaultFs, log: Logger): Promise<void> {
  const entries = await fs.list('', { limit: 1 });
  if (entries.length > 0) return;
  try {
    await fs.create('Welcome.md', Buffer.from(WELCOME_NOTE));
    log.info('created Welcome.md in the empty vault');
  } catch {
    // Someone created it meanwhile; nothing to do.
  }
}
