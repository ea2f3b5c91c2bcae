// One booted generation of one family: validated settings, compiled tools, services it provides,
// its own Fastify instance for routes. Counts in-flight calls so a swap can close it only after
// they finish.
import Fastify, { type FastifyInstance } from 'fastify';
import { createContainer, asValue, type AwilixContainer } from 'awilix';
import type { DefinedFamily } from '../../sdk/define-family.js';
import type { FamilyRouteContext, IndexContributor, ServiceFactoryContext } from '../../sdk/types.js';
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
  /** Scoped container: host values plus this family's own services. */
  readonly container: AwilixContainer;
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

  /** Create provided services and the route app. `lookup` resolves services of other families. */
  async boot(host: HostServices, lookup: (name: string) => unknown, has: (name: string) => boolean): Promise<void> {
    const service = <T>(name: string): T => {
      if (this.provided.has(name)) return this.provided.get(name) as T;
      return lookup(name) as T;
    };
    const hasService = (name: string) => this.provided.has(name) || has(name);
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
    };
    for (const [name, provider] of Object.entries(this.family.provides ?? {})) {
      const instance = await provider.create(factoryCtx);
      this.provided.set(name, instance);
      this.container.register(name, asValue(instance));
    }
    const indexers = this.family.indexers;
    this.indexers = typeof indexers === 'function' ? indexers({ settings: this.settings, log: host.log, service, hasService }) : (indexers ?? []);
    const observers = this.family.writeObservers;
    this.writeObservers = typeof observers === 'function' ? observers({ settings: this.settings, log: host.log, service, hasService }) : (observers ?? []);
    if (this.family.routes) {
      const app = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 });
      const routeCtx: FamilyRouteContext = { server: host.server, db: host.database.db, log: host.log, settings: this.settings, service, hasService, vault: (id) => host.vault(id) };
      await app.register(this.family.routes.plugin, { family: routeCtx });
      await app.ready();
      this.routeApp = app;
    }
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
      if (instance !== undefined && provider.dispose) await Promise.resolve(provider.dispose(instance)).catch(() => undefined);
    }
    await this.container.dispose().catch(() => undefined);
    if (this.routeApp) await this.routeApp.close().catch(() => undefined);
  }
}
