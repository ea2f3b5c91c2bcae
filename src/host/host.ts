// The composition root: opens the database and every served vault, wires the host's parts and owns shutdown;
// its parts: health.ts, reload.ts, welcome.ts, http/listener.ts, cluster/host-cluster.ts, admin/host-target.ts.
import type { FastifyInstance } from 'fastify';
import type { ListEvents, Logger, Principal, VaultHandle } from '../sdk/types.js';
import type { HealthBacklog } from '../sdk/define-family.js';
import type { AdminChannel } from './admin/channel-server.js';
import { openHostAdmin, operationTarget } from './admin/host-target.js';
import type { OperationTarget } from './admin/operations.js';
import { adminSocketPath } from './admin/protocol.js';
import { Admission, effectiveLimits, type WriteCallGauge } from './admission/index.js';
import { DatabaseQuota } from './admission/quota.js';
import type { HostMetrics } from './metrics/index.js';
import { ApiKeyVerifier, closedCredentials, KEYS_CHANGED_CHANNEL } from './auth/api-keys.js';
import { registrationBudget, signInBudget, type AttemptBudget } from './auth/attempt-budget.js';
import { ensureOperator, listUsers } from './auth/users.js';
import { ensureVault, listVaults } from './auth/vaults.js';
import { Forwarder } from './cluster/forward.js';
import { checkFence } from './cluster/fence.js';
import { VaultLeases } from './cluster/leases.js';
import { AuditWriter } from './audit/batch-writer.js';
import { hostEngineOptions, migrateHost, openDatabase, type DatabaseService, type OpenedEngine } from './db/index.js';
import { ToolDispatcher } from './families/dispatch.js';
import type { HostServices } from './families/host-services.js';
import { FamilyManager, preloadFamilies, type ApplyResult } from './families/manager.js';
import { listenHttp, listenUrl } from './http/listener.js';
import type { HttpSurface } from './http/surfaces.js';
import type { OAuthServer } from './oauth/server.js';
import type { ProviderOptions } from './oauth/provider.js';
import type { IndexPipeline } from './index/index.js';
import { createLogger } from './log/logger.js';
import { MemoryTrim, trimNativeMemory } from './memory-trim.js';
import type { ServerDeps } from './mcp/server-factory.js';
import { RequestStateSeal } from './mcp/request-state.js';
import { SessionHub } from './mcp/sessions.js';
import { ResourceSubscriptions } from './mcp/subscriptions.js';
import { resolvePath, SettingsError, type Settings } from './settings/load.js';
import { applyDeclaredOrRefuse } from './vaults/declared.js';
import { VaultRegistry } from './vaults/registry.js';
import { PiscinaPool } from './workers/pool.js';
import { familyHealthByVault, healthBacklogs, hostHealth, hostMetrics } from './health.js';
import { ConfigReloader } from './reload.js';
import { seedWelcomeNote } from './welcome.js';
import { hostForwarder, hostLeases, sharedRequestStates } from './cluster/host-cluster.js';

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
  /**
   * The database's engine, already opening with `hostEngineOptions(settings, log)` (cli/owner.ts starts an
   * embedded one's thread before the host's modules load); absent: opened here.
   */
  readonly engine?: Promise<OpenedEngine>;
  /** Test-only seams for the OAuth client metadata fetch (never set from configuration). */
  readonly oauthFetchSeams?: ProviderOptions['fetchSeams'];
  /**
   * Pages clients of the host mount on its HTTP listener, each when its settings turn it on (the CLI's
   * serve passes the operator panel); the host imports none of them.
   */
  readonly surfaces?: readonly HttpSurface[];
}

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
  /** Gives freed native memory back to the system (glibc's malloc_trim), from start to close. */
  private readonly memoryTrim: MemoryTrim;
  app: FastifyInstance | undefined;
  /** Every vault this process serves, each with its own index pipeline. */
  readonly vaults: VaultRegistry;
  /** The vault.path vault (the operator's); set by start() before anything is served. */
  vaultHandle!: VaultHandle;
  /** The admin channel's socket, when this process opened one. */
  admin: AdminChannel | undefined;
  /** The embedded authorization server, when offered (server.publicUrl set and oauth.enabled). */
  oauth: OAuthServer | undefined;
  /** Stops listening for revocations made by other processes sharing a server database. */
  private stopKeyListener: (() => Promise<void>) | undefined;
  private reaper: NodeJS.Timeout | undefined;
  /** Config reloads: the file watch, SIGHUP, one reload at a time. */
  private readonly reloader: ConfigReloader;
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
    this.memoryTrim = new MemoryTrim(log);
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
    this.reloader = new ConfigReloader({
      settings: () => this.settings,
      adopt: (next) => {
        this.settings = next;
      },
      closed: () => this.closed,
      log,
      db: database.db,
      defaultVaultId,
      manager: this.manager,
      vaults: this.vaults,
      credentialsChanged: () => this.credentialsChanged(),
      pruneRemovedVaults: () => this.pruneRemovedVaults(),
    });
    this.manager.registry.on('changed', () => this.vaults.contributorsChanged());
    if (h.metrics.enabled && metricsModule) this.metrics = hostMetrics(this, metricsModule);
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
    // Not awaited: the families load on this thread while the database opens (PGlite on its own thread).
    void preloadFamilies(settings, options.builtinDir);
    const database = await openDatabase(
      h.database.url,
      { ...hostEngineOptions(settings, log), pgliteMaintenanceSeconds: h.database.pgliteMaintenanceSeconds },
      options.engine,
    );
    let host: Host | undefined;
    try {
      // What the engine's start freed (PGlite compiling its WebAssembly on its thread) goes back before the
      // migrations and the families allocate, and what loading the families freed before the index starts:
      // a first start's peak is then lower (bench/footprint). The periodic trim comes only after start.
      trimNativeMemory();
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
        servingVaults: () => host?.vaults.servingIds() ?? [],
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
          ? hostLeases(() => host, {
              url: h.database.url,
              db: database.db,
              log,
              bid: h.cluster.ownVaults && options.http === true,
              intervalMs: h.cluster.leaseIntervalMs,
            })
          : undefined;
      const metricsModule = h.metrics.enabled ? await import('./metrics/index.js') : undefined;
      host = new Host(settings, log, database, vaultId, services, options.builtinDir, leases, metricsModule);
      if (leases) host.requestStates = await sharedRequestStates(database.db);
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
      trimNativeMemory();
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
      if (leases && options.http) host.forwarder = await hostForwarder(host, leases);
      if (options.http) host.reaper = await listenHttp(host, options.surfaces ?? []);
      // Bid only once this process can be reached: a vault it wins is forwarded to at once.
      await leases?.start();
      const socketPath = options.admin === false ? undefined : adminSocketPath(settings);
      if (socketPath) host.admin = await openHostAdmin(host, socketPath, options.command ?? 'exocortex');
      host.reloader.watch();
      host.memoryTrim.start();
      return host;
    } catch (e) {
      if (host) await host.close();
      else await database.close();
      throw e;
    }
  }

  /** Everything an operator command needs from this process (the admin channel and the CLI share it). */
  get operations(): OperationTarget {
    return operationTarget(this, () => this.credentialsChanged());
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

  /** The base URL the server listens on (for tests and the first-start message). */
  get url(): string {
    return listenUrl(this);
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

  get isClosed(): boolean {
    return this.closed;
  }

  /** Re-read the config file and apply vault, user and family changes. A bad file keeps the current ones. */
  reload(): Promise<ApplyResult> {
    return this.reloader.reload();
  }

  /** The /health body (health.ts). */
  health(): Promise<Record<string, unknown>> {
    return hostHealth(this);
  }

  /** Each serving family's own counts for every served vault, by vault name then family (health.ts). */
  familyHealthByVault(): Promise<Record<string, Record<string, unknown>>> {
    return familyHealthByVault(this);
  }

  /** The backlogs serving families declare (`healthBacklog`): which health fields to sum, per family. */
  healthBacklogs(): Array<HealthBacklog & { family: string }> {
    return healthBacklogs(this);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.reloader.close();
    clearInterval(this.reaper);
    this.memoryTrim.stop();
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
