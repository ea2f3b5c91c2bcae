// One booted generation of one family: validated settings, compiled tools, services it provides,
// its own Fastify instance for routes. Counts in-flight calls so a swap can close it only after
// they finish.
import Fastify, { type FastifyInstance } from 'fastify';
import { asFunction, asValue, createContainer, Lifetime, type AwilixContainer } from 'awilix';
import type { DefinedFamily } from '../../sdk/define-family.js';
import type {
  FamilyRouteContext,
  IndexContributor,
  Principal,
  ServiceFactoryContext,
  ServiceLookup,
  VaultHandle,
} from '../../sdk/types.js';
import { parseRequirement, serviceName, type ServiceRequirement } from '../../sdk/service-ref.js';
import type { WriteObserver } from '../../sdk/write-hooks.js';
import type { CompiledTool } from './tool-compiler.js';
import type { HostServices } from './host-services.js';

export interface GenerationInput {
  readonly family: DefinedFamily;
  readonly source: string;
  readonly readOnly: boolean;
  readonly settings: Record<string, unknown>;
  readonly fingerprint: string;
  readonly tools: CompiledTool[];
  readonly number: number;
}

/** Services from outside a generation: the host's named ones and those other families provide. */
export interface ExternalServices {
  lookup(name: string): unknown;
  has(name: string): boolean;
}

const NONE: ExternalServices = { lookup: () => undefined, has: () => false };

export class FamilyGeneration {
  readonly name: string;
  readonly family: DefinedFamily;
  readonly source: string;
  readonly readOnly: boolean;
  readonly settings: Record<string, unknown>;
  readonly fingerprint: string;
  readonly number: number;
  readonly tools: ReadonlyMap<string, CompiledTool>;
  /** This generation's index contributors (a family may build them from its settings and services). */
  indexers: readonly IndexContributor<any>[] = [];
  /** This generation's write observers (built like its indexers). */
  writeObservers: readonly WriteObserver[] = [];
  /**
   * This generation's container: host values, the family's own services, and a forwarder per other
   * service it asks for (resolved on each call, so a provider's reload is seen). Every service lookup of the
   * family (tools, prompts, resources, routes, factories, contributors, observers, health) resolves here.
   */
  readonly container: AwilixContainer;
  /** Where services that are not the family's own come from: the set being booted, then the serving one. */
  private external: ExternalServices = NONE;
  readonly provided = new Map<string, unknown>();
  routeApp: FastifyInstance | undefined;
  private inFlight = 0;
  private drained: (() => void) | undefined;
  private closed = false;

  constructor(input: GenerationInput) {
    this.name = input.family.name;
    this.family = input.family;
    this.source = input.source;
    this.readOnly = input.readOnly;
    this.settings = input.settings;
    this.fingerprint = input.fingerprint;
    this.number = input.number;
    this.tools = new Map(input.tools.map((t) => [t.name, t]));
    this.container = createContainer({ strict: true });
  }

  /**
   * The one service lookup: a ref (or, deprecated, a name) resolved through the container, or through a
   * per-call scope of it. An optional service that is absent resolves to undefined.
   */
  services(scope: AwilixContainer | (() => AwilixContainer) = this.container): ServiceLookup {
    let made: AwilixContainer | undefined;
    const service = (ref: ServiceRequirement): unknown => {
      const name = serviceName(ref);
      if (!this.container.hasRegistration(name)) this.forward(name);
      return (typeof scope === 'function' ? (made ??= scope()) : scope).resolve(name);
    };
    const hasService = (ref: ServiceRequirement): boolean => {
      const name = serviceName(ref);
      return this.provided.has(name) || this.external.has(name);
    };
    return { service: service as ServiceLookup['service'], hasService };
  }

  /**
   * A scope for one call, holding who is calling, for services that need the principal: made at the call's
   * first service lookup (most calls of most tools make none, and a scope costs a container).
   */
  callScope(principal: Principal, vault: VaultHandle): () => AwilixContainer {
    return () => this.container.createScope().register({ principal: asValue(principal), vault: asValue(vault) });
  }

  private forward(name: string): void {
    this.container.register(
      name,
      asFunction(() => (this.external.has(name) ? this.external.lookup(name) : undefined), {
        lifetime: Lifetime.TRANSIENT,
      }),
    );
  }

  /**
   * Create provided services and the route app. `booting` finds services of the families booted with this
   * one (providers boot first); `serving` is the registry's live lookup, used once the generation serves.
   */
  async boot(host: HostServices, booting: ExternalServices, serving: ExternalServices): Promise<void> {
    this.external = booting;
    const { service, hasService } = this.services();
    this.container.register({
      settings: asValue(this.settings),
      db: asValue(host.database.db),
      workers: asValue(host.workers),
      log: asValue(host.log),
    });
    const factoryCtx: ServiceFactoryContext = {
      server: host.server,
      db: host.database.db,
      log: host.log,
      settings: this.settings,
      workers: host.workers,
      service,
      hasService,
      vault: (id) => host.vault(id),
      servingVaults: () => host.servingVaults(),
    };
    for (const [name, provider] of Object.entries(this.family.provides ?? {})) {
      const instance = await provider.create(factoryCtx);
      this.provided.set(name, instance);
      this.container.register(name, asValue(instance));
    }
    for (const entry of this.family.requires ?? []) {
      const { name } = parseRequirement(entry);
      if (!this.container.hasRegistration(name)) this.forward(name);
    }
    const indexers = this.family.indexers;
    this.indexers =
      typeof indexers === 'function'
        ? indexers({ settings: this.settings, log: host.log, service, hasService })
        : (indexers ?? []);
    const observers = this.family.writeObservers;
    this.writeObservers =
      typeof observers === 'function'
        ? observers({ settings: this.settings, log: host.log, service, hasService })
        : (observers ?? []);
    if (this.family.routes) {
      const app = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 });
      const routeCtx: FamilyRouteContext = {
        server: host.server,
        db: host.database.db,
        log: host.log,
        settings: this.settings,
        service,
        hasService,
        vault: (id) => host.vault(id),
        routeToOwner: (id, request, reply, opts) =>
          host.routeByVault
            ? host.routeByVault(id, request, reply, opts.write, this.family.name)
            : Promise.resolve(false),
        clientAddress: (request) => host.clientAddress?.(request) ?? request.ip,
      };
      await app.register(this.family.routes.plugin, { family: routeCtx });
      await app.ready();
      this.routeApp = app;
    }
    this.external = serving;
  }

  /** Enter a call; false when the generation is closing (the caller should re-resolve). */
  enter(): boolean {
    if (this.closed) return false;
    this.inFlight++;
    return true;
  }

  leave(): void {
    this.inFlight--;
    if (this.inFlight === 0 && this.drained) this.drained();
  }

  get busy(): number {
    return this.inFlight;
  }

  /** Stop taking calls, wait for in-flight ones (bounded), then dispose services and routes. */
  async close(maxWaitMs = 30_000): Promise<void> {
    this.closed = true;
    if (this.inFlight > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, maxWaitMs);
        timer.unref();
        this.drained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    for (const [name, provider] of Object.entries(this.family.provides ?? {})) {
      const instance = this.provided.get(name);
      if (instance !== undefined && provider.dispose)
        await Promise.resolve(provider.dispose(instance)).catch(() => undefined);
    }
    await this.container.dispose().catch(() => undefined);
    if (this.routeApp) await this.routeApp.close().catch(() => undefined);
  }
}
