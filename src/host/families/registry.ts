// The live registry: the serving generation of each family, swapped atomically as a whole. Readers
// (transports, dispatcher, index pipeline) see either the old set or the new one, never a mix.
import { EventEmitter } from 'node:events';
import type { IndexContributor, Principal, PromptDefinition, ResourceDefinition } from '../../sdk/types.js';
import { mayRead, mayWrite } from '../../sdk/scopes.js';
import type { WriteEvent, WriteObserver, WriteObservers } from '../../sdk/write-hooks.js';
import type { FamilyGeneration } from './generation.js';
import type { CompiledTool } from './tool-compiler.js';
import { describeForVisible } from '../../sdk/tool-description.js';

export type FamilyState = 'serving' | 'disabled' | 'unavailable' | 'failed';

export interface FamilyStatus {
  readonly state: FamilyState;
  readonly readOnly: boolean;
  readonly generation: number | null;
  readonly tools: number;
  readonly reason?: string;
}

export interface ToolEntry {
  readonly generation: FamilyGeneration;
  readonly tool: CompiledTool;
}

export interface PromptEntry {
  readonly generation: FamilyGeneration;
  readonly name: string;
  readonly prompt: PromptDefinition;
}

export interface ResourceEntry {
  readonly generation: FamilyGeneration;
  readonly resource: ResourceDefinition;
}

interface Snapshot {
  readonly generations: ReadonlyMap<string, FamilyGeneration>;
  readonly tools: ReadonlyMap<string, ToolEntry>;
  readonly prompts: ReadonlyMap<string, PromptEntry>;
  readonly resources: readonly ResourceEntry[];
  readonly status: ReadonlyMap<string, FamilyStatus>;
}

export interface RegistryChange {
  readonly tools: boolean;
  readonly prompts: boolean;
  readonly resources: boolean;
}

/** Whether the credential's scopes let it write through this family's tools. */
export function canWrite(principal: Principal, family: string): boolean {
  return mayWrite(principal.scopes, family);
}

/** Whether the credential's scopes let it see this family's tools, prompts and resources at all. */
export function canRead(principal: Principal, family: string): boolean {
  return mayRead(principal.scopes, family);
}

export class FamilyRegistry extends EventEmitter {
  private snap: Snapshot = {
    generations: new Map(),
    tools: new Map(),
    prompts: new Map(),
    resources: [],
    status: new Map(),
  };
  /** Increments on every swap; lets clients and tests observe reloads. */
  version = 0;
  /** When the serving set last changed after the first load (ms since the epoch; 0 before any reload). */
  changedAt = 0;
  /** Whether a service is available now, and the service itself (set by the loader). */
  serviceAvailable: (name: string) => boolean = () => true;
  serviceLookup: (name: string) => unknown = () => undefined;

  /** Why this tool cannot work with the services serving now (hidden and refused), if it cannot. */
  unavailable(entry: ToolEntry): { service: string; reason: string } | undefined {
    const missing = entry.tool.schema.requiresServices?.find((s) => !this.serviceAvailable(s));
    if (missing)
      return { service: missing, reason: `no enabled family provides it, so ${entry.tool.name} is unavailable` };
    const check = entry.tool.module.available;
    if (!check) return undefined;
    const gen = entry.generation;
    try {
      const verdict = check(gen.services());
      return verdict === true
        ? undefined
        : { service: entry.tool.schema.requiresServices?.[0] ?? entry.generation.name, reason: verdict };
    } catch (e) {
      return { service: entry.generation.name, reason: `its availability check failed: ${(e as Error).message}` };
    }
  }

  get generations(): ReadonlyMap<string, FamilyGeneration> {
    return this.snap.generations;
  }

  /** Each family's state; `tools` counts the tools it lists now (profile and available services applied). */
  get status(): ReadonlyMap<string, FamilyStatus> {
    const listed = new Map<string, number>();
    for (const e of this.snap.tools.values())
      if (this.inProfile(e) && !this.unavailable(e))
        listed.set(e.generation.name, (listed.get(e.generation.name) ?? 0) + 1);
    const out = new Map<string, FamilyStatus>();
    for (const [name, st] of this.snap.status)
      out.set(name, st.state === 'serving' ? { ...st, tools: listed.get(name) ?? 0 } : st);
    return out;
  }

  /** Replace the serving set. Tool-name collisions must have been rejected by the caller. */
  swap(generations: Map<string, FamilyGeneration>, status: Map<string, FamilyStatus>): RegistryChange {
    const before = this.snap;
    const tools = new Map<string, ToolEntry>();
    const prompts = new Map<string, PromptEntry>();
    const resources: ResourceEntry[] = [];
    for (const gen of generations.values()) {
      for (const tool of gen.tools.values()) tools.set(tool.name, { generation: gen, tool });
      for (const [name, prompt] of Object.entries(gen.family.prompts ?? {}))
        prompts.set(name, { generation: gen, name, prompt });
      for (const resource of gen.family.resources ?? []) resources.push({ generation: gen, resource });
    }
    this.snap = { generations, tools, prompts, resources, status };
    this.version++;
    if (before.generations.size > 0) this.changedAt = Date.now();
    const change: RegistryChange = {
      tools:
        surfaceKey(before.tools, (e) => `${e.tool.name}:${e.generation.number}`) !==
        surfaceKey(tools, (e) => `${e.tool.name}:${e.generation.number}`),
      prompts:
        surfaceKey(before.prompts, (e) => `${e.name}:${e.generation.number}`) !==
        surfaceKey(prompts, (e) => `${e.name}:${e.generation.number}`),
      resources:
        before.resources.map((r) => `${r.resource.uri ?? r.resource.uriTemplate}:${r.generation.number}`).join() !==
        resources.map((r) => `${r.resource.uri ?? r.resource.uriTemplate}:${r.generation.number}`).join(),
    };
    this.emit('changed', change);
    return change;
  }

  findTool(name: string): ToolEntry | undefined {
    return this.snap.tools.get(name);
  }

  /** vault.readOnly: no write tool of any family is listed or runs (set by the host). */
  vaultReadOnly = false;

  /**
   * Whether this principal may call a tool of this entry: its scopes reach the family, and write tools
   * need the vault, the family and the credential writable.
   */
  mayCall(entry: ToolEntry, principal: Principal): boolean {
    const family = entry.generation.name;
    if (!canRead(principal, family)) return false;
    return !entry.tool.writes || (!this.vaultReadOnly && !entry.generation.readOnly && canWrite(principal, family));
  }

  /** tools.profile (set by the host): `full` serves every tool, another profile only the tools declaring it. */
  profile = 'full';

  /** Whether the served profile includes this tool (a tool outside it is neither listed nor called). */
  inProfile(entry: ToolEntry): boolean {
    return this.profile === 'full' || (entry.tool.schema.profiles ?? []).includes(this.profile);
  }

  listTools(principal: Principal): ToolEntry[] {
    return [...this.snap.tools.values()].filter(
      (e) => this.inProfile(e) && this.mayCall(e, principal) && !this.unavailable(e),
    );
  }

  /**
   * Each listed tool with its description as served: a passage naming a tool this principal is not listed
   * is left out, so no description sends an agent to a tool it cannot see.
   */
  describedTools(principal: Principal): Array<{ entry: ToolEntry; description: string }> {
    const listed = this.listTools(principal);
    const visible = new Set(listed.map((e) => e.tool.name));
    return listed.map((entry) => ({ entry, description: describeForVisible(entry.tool.schema.description, visible) }));
  }

  listPrompts(principal: Principal): PromptEntry[] {
    return [...this.snap.prompts.values()].filter((e) => {
      const family = e.generation.name;
      if (!canRead(principal, family)) return false;
      return !e.prompt.writes || (!this.vaultReadOnly && !e.generation.readOnly && canWrite(principal, family));
    });
  }

  findPrompt(name: string): PromptEntry | undefined {
    return this.snap.prompts.get(name);
  }

  /** Resources of every serving family, or only of those this principal's scopes reach. */
  listResources(principal?: Principal): readonly ResourceEntry[] {
    return principal ? this.snap.resources.filter((r) => canRead(principal, r.generation.name)) : this.snap.resources;
  }

  contributors(): Array<{ family: string; contributor: IndexContributor<any> }> {
    const out: Array<{ family: string; contributor: IndexContributor<any> }> = [];
    for (const gen of this.snap.generations.values())
      for (const c of gen.indexers) out.push({ family: gen.name, contributor: c });
    return out;
  }

  /** Every serving family's write observers, in family order. */
  writeObservers(): Array<{ family: string; observer: WriteObserver }> {
    const out: Array<{ family: string; observer: WriteObserver }> = [];
    for (const gen of this.snap.generations.values())
      for (const o of gen.writeObservers) out.push({ family: gen.name, observer: o });
    return out;
  }

  /**
   * The host service `write-observers`: each call runs the observers serving at that moment, so a
   * family switched off stops observing at the next write. A `before` that throws refuses the write.
   */
  observersService(): WriteObservers {
    const registry = this;
    return {
      get active() {
        for (const gen of registry.snap.generations.values()) if (gen.writeObservers.length) return true;
        return false;
      },
      incumbentLimit() {
        let limit = 0;
        for (const { observer } of registry.writeObservers())
          limit = Math.max(limit, observer.incumbentLimit?.() ?? Number.MAX_SAFE_INTEGER);
        return limit;
      },
      async before(event: WriteEvent) {
        for (const { observer } of registry.writeObservers()) if (observer.before) await observer.before(event);
      },
      async after(event: WriteEvent) {
        const failures: unknown[] = [];
        for (const { observer } of registry.writeObservers()) {
          if (!observer.after) continue;
          try {
            await observer.after(event);
          } catch (e) {
            failures.push(e);
          }
        }
        if (failures.length) throw failures[0];
      },
    };
  }

  /** A service provided by a serving family, or undefined. */
  providedService(name: string): unknown {
    for (const gen of this.snap.generations.values()) if (gen.provided.has(name)) return gen.provided.get(name);
    return undefined;
  }

  /** The generation serving a URL path through its routes, if any. */
  routeFor(url: string): FamilyGeneration | undefined {
    const p = url.split('?')[0];
    for (const gen of this.snap.generations.values()) {
      for (const prefix of gen.family.routes?.prefixes ?? [])
        if (gen.routeApp && (p === prefix || p.startsWith(`${prefix}/`))) return gen;
    }
    return undefined;
  }
}

function surfaceKey<T>(m: ReadonlyMap<string, T>, f: (v: T) => string): string {
  return [...m.values()].map(f).sort().join('|');
}
