// The family loader: turns settings into a plan (which families, read-only or not, with what
// settings), boots changed families as a new generation beside the old, swaps the registry
// atomically, then closes the old generations once their in-flight calls finish.
import type { ValidateFunction } from 'ajv';
import { parseRequirement, type DefinedFamily } from '../../sdk/define-family.js';
import { envName, parseEnvValue, setPath, type Settings } from '../settings/load.js';
import { migrate } from '../db/index.js';
import { familyRefusalSpecs, registerFamilyRefusals } from '../../sdk/refusals.js';
import { familySources, importFamily, type FamilySource } from './discover.js';
import { FamilyGeneration } from './generation.js';
import type { HostServices } from './host-services.js';
import { FamilyRegistry, type FamilyStatus } from './registry.js';
import { compileFamilyTools, compileSchema } from './tool-compiler.js';

export interface ApplyResult {
  readonly ok: boolean;
  /** Problems that refused the whole plan (bad config): the previous generation keeps serving. */
  readonly errors: readonly string[];
  readonly booted: readonly string[];
  readonly closed: readonly string[];
}

interface Candidate {
  readonly source: FamilySource;
  readonly family: DefinedFamily;
  readonly enabled: boolean;
  readonly readOnly: boolean;
}

export class FamilyManager {
  readonly registry = new FamilyRegistry();
  private readonly modules = new Map<string, Promise<DefinedFamily>>();
  private generationCounter = 0;
  private applying: Promise<ApplyResult> = Promise.resolve({ ok: true, errors: [], booted: [], closed: [] });
  lastResult: (ApplyResult & { at: string }) | undefined;

  constructor(
    private readonly host: HostServices,
    private readonly builtinDir?: string,
  ) {
    this.registry.serviceAvailable = this.has;
    this.registry.serviceLookup = (name) => (this.has(name) ? this.lookup(name) : undefined);
  }

  /** Serialised: a reload that arrives during another waits for it. */
  apply(settings: Settings): Promise<ApplyResult> {
    this.applying = this.applying
      .then(() => this.applyNow(settings))
      .then((r) => {
        this.lastResult = { ...r, at: new Date().toISOString() };
        return r;
      });
    return this.applying;
  }

  /** Services available to families: host-named ones plus those provided by serving families. */
  private lookup = (name: string): unknown => {
    if (this.host.named.has(name)) return this.host.named.get(name);
    const provided = this.registry.providedService(name);
    if (provided === undefined) throw new Error(`service "${name}" is not available`);
    return provided;
  };

  private has = (name: string): boolean =>
    this.host.named.has(name) || this.registry.providedService(name) !== undefined;

  private async applyNow(settings: Settings): Promise<ApplyResult> {
    let candidates: Candidate[];
    let sectionsByFamily: Map<string, Record<string, unknown>>;
    try {
      candidates = await this.candidates(settings);
      sectionsByFamily = this.validateSections(settings, candidates);
    } catch (e) {
      const errors = (e as Error).message.split('\n').filter(Boolean);
      this.host.log.error({ errors }, 'configuration refused; the previous families keep serving');
      return { ok: false, errors, booted: [], closed: [] };
    }

    const status = new Map<string, FamilyStatus>();
    const enabled = candidates.filter((c) => c.enabled);
    for (const c of candidates)
      if (!c.enabled)
        status.set(c.family.name, { state: 'disabled', readOnly: c.readOnly, generation: null, tools: 0 });

    // Requirements: iterate to a fixpoint, dropping families whose required service nobody offers.
    let serving = enabled;
    for (;;) {
      const offered = new Set<string>(this.host.named.keys());
      for (const c of serving) for (const s of Object.keys(c.family.provides ?? {})) offered.add(s);
      const unmet = serving.filter((c) =>
        (c.family.requires ?? []).map(parseRequirement).some((r) => !r.optional && !offered.has(r.name)),
      );
      if (unmet.length === 0) break;
      for (const c of unmet) {
        const missing = (c.family.requires ?? [])
          .map(parseRequirement)
          .filter((r) => !r.optional && !offered.has(r.name))
          .map((r) => r.name);
        const providers = candidates
          .filter((o) => missing.some((m) => m in (o.family.provides ?? {})))
          .map((o) => o.family.name);
        const reason = `requires ${missing.join(', ')}, which no enabled family provides${providers.length ? ` (enable ${providers.join(' or ')})` : ''}`;
        status.set(c.family.name, { state: 'unavailable', readOnly: c.readOnly, generation: null, tools: 0, reason });
        this.host.log.warn({ family: c.family.name, reason }, 'family not loaded');
      }
      serving = serving.filter((c) => !unmet.includes(c));
    }

    // Boot providers before the families that need them.
    serving = orderByProvides(serving);
    const current = this.registry.generations;
    const next = new Map<string, FamilyGeneration>();
    const booted: string[] = [];
    const rebooted = new Set<string>();
    const toolOwners = new Map<string, string>();
    for (const c of serving) {
      const name = c.family.name;
      const settingsForFamily = sectionsByFamily.get(name) ?? {};
      const deps = (c.family.requires ?? []).map((r) => parseRequirement(r).name);
      const depGens = serving
        .filter((o) => o !== c && deps.some((d) => d in (o.family.provides ?? {})))
        .map((o) => o.family.name);
      const fingerprint = JSON.stringify({
        url: c.source.url,
        readOnly: c.readOnly,
        settings: settingsForFamily,
        deps: depGens.map((d) => (rebooted.has(d) ? `new:${d}` : `${d}:${current.get(d)?.number ?? 'none'}`)),
      });
      const old = current.get(name);
      if (old && old.fingerprint === fingerprint) {
        next.set(name, old);
        for (const t of old.tools.keys()) toolOwners.set(t, name);
        status.set(name, { state: 'serving', readOnly: c.readOnly, generation: old.number, tools: old.tools.size });
        continue;
      }
      try {
        const tools = await compileFamilyTools(c.family);
        for (const t of tools) {
          const owner = toolOwners.get(t.name);
          if (owner) throw new Error(`tool "${t.name}" is already served by family ${owner}`);
        }
        registerFamilyRefusals(name, familyRefusalSpecs(c.family));
        if (c.family.migrations && Object.keys(c.family.migrations).length)
          await migrate(this.host.database.db, `family_${name}`, c.family.migrations);
        const gen = new FamilyGeneration({
          family: c.family,
          source: c.source.url,
          readOnly: c.readOnly,
          settings: settingsForFamily,
          fingerprint,
          tools,
          number: ++this.generationCounter,
        });
        const booting = {
          lookup: (svc: string): unknown => {
            for (const g of next.values()) if (g.provided.has(svc)) return g.provided.get(svc);
            return this.lookup(svc);
          },
          has: (svc: string): boolean => [...next.values()].some((g) => g.provided.has(svc)) || this.has(svc),
        };
        await gen.boot(this.host, booting, {
          lookup: (svc) => this.registry.serviceLookup(svc),
          has: (svc) => this.registry.serviceAvailable(svc),
        });
        next.set(name, gen);
        for (const t of tools) toolOwners.set(t.name, name);
        booted.push(name);
        rebooted.add(name);
        status.set(name, { state: 'serving', readOnly: c.readOnly, generation: gen.number, tools: gen.tools.size });
      } catch (e) {
        const reason = (e as Error).message;
        this.host.log.error({ family: name, err: reason }, 'family failed to boot');
        if (old) {
          next.set(name, old);
          for (const t of old.tools.keys()) toolOwners.set(t, name);
          status.set(name, {
            state: 'serving',
            readOnly: old.readOnly,
            generation: old.number,
            tools: old.tools.size,
            reason: `new generation failed to boot, previous one still serving: ${reason}`,
          });
        } else {
          status.set(name, { state: 'failed', readOnly: c.readOnly, generation: null, tools: 0, reason });
        }
      }
    }

    const retired = [...current.values()].filter((g) => next.get(g.name) !== g);
    this.registry.swap(next, status);
    void Promise.all(retired.map((g) => g.close())).catch((e) =>
      this.host.log.error({ err: String(e) }, 'closing a retired generation failed'),
    );
    if (booted.length || retired.length)
      this.host.log.info({ booted, closed: retired.map((g) => g.name) }, 'families swapped');
    return { ok: true, errors: [], booted, closed: retired.map((g) => g.name) };
  }

  private async candidates(settings: Settings): Promise<Candidate[]> {
    const { sources, problems } = familySources(settings.host.plugins, settings.baseDir, this.builtinDir);
    const out: Candidate[] = [];
    const seen = new Map<string, string>();
    // Imported side by side, reported in order.
    const loading = sources.map((source) => this.importOnce(source));
    for (const [i, source] of sources.entries()) {
      let family: DefinedFamily;
      try {
        family = await loading[i]!;
      } catch (e) {
        problems.push(`${source.spec}: cannot be loaded: ${(e as Error).message}`);
        continue;
      }
      const prior = seen.get(family.name);
      if (prior) {
        problems.push(
          `family name "${family.name}" is used by both ${prior} and ${source.spec}: remove one from plugins`,
        );
        continue;
      }
      seen.set(family.name, source.spec);
      const toggle = settings.host.families[family.name] ?? { enabled: true, readOnly: false };
      out.push({ source, family, enabled: toggle.enabled, readOnly: toggle.readOnly });
    }
    for (const name of Object.keys(settings.host.families)) {
      if (!seen.has(name))
        problems.push(
          `families.${name} names no installed family (known: ${[...seen.keys()].join(', ') || 'none'}); remove it or add its package to plugins`,
        );
    }
    if (problems.length) throw new Error(problems.join('\n'));
    return out;
  }

  private importOnce(source: FamilySource): Promise<DefinedFamily> {
    let p = this.modules.get(source.url);
    if (!p) {
      p = importFamily(source);
      this.modules.set(source.url, p);
      p.catch(() => this.modules.delete(source.url));
    }
    return p;
  }

  /** Validate each family's config sections (defaults applied); unclaimed sections are refused. */
  private validateSections(settings: Settings, candidates: Candidate[]): Map<string, Record<string, unknown>> {
    const problems: string[] = [];
    const claimed = new Map<string, string>();
    const out = new Map<string, Record<string, unknown>>();
    const envLeft = new Map(Object.entries(settings.familyEnv ?? {}));
    for (const c of candidates) {
      const mine: Record<string, unknown> = {};
      for (const [section, schema] of Object.entries(c.family.settings ?? {})) {
        const owner = claimed.get(section);
        if (owner) {
          problems.push(`config section "${section}" is claimed by both ${owner} and ${c.family.name}`);
          continue;
        }
        claimed.set(section, c.family.name);
        const value = structuredClone(settings.sections[section] ?? {}) as Record<string, unknown>;
        for (const leaf of schemaLeaves(schema, [section])) {
          const name = `EXO_${envName(leaf)}`;
          const raw = envLeft.get(name);
          if (raw === undefined) continue;
          envLeft.delete(name);
          setPath(value, leaf.slice(1), parseEnvValue(raw));
        }
        const validate = sectionValidator(schema);
        if (!validate(value)) {
          for (const err of (validate.errors ?? []).slice(0, 5)) {
            const at = [section, ...err.instancePath.split('/').filter(Boolean)].join('.');
            const what =
              err.keyword === 'additionalProperties'
                ? `unknown key ${at}.${(err.params as { additionalProperty: string }).additionalProperty}`
                : `${at} ${err.message}`;
            problems.push(`${what} (a setting of family ${c.family.name}); fix it in the config file`);
          }
        }
        mine[section] = value;
      }
      out.set(c.family.name, mine);
    }
    for (const name of envLeft.keys())
      problems.push(
        `environment variable ${name} matches no setting of the host or of any installed family: unset it or check its spelling (see docs/configuration.md)`,
      );
    for (const section of Object.keys(settings.sections)) {
      if (!claimed.has(section))
        problems.push(
          `unknown key ${section}: no host setting or installed family uses it; remove it or check its spelling (every setting: docs/configuration.md)`,
        );
    }
    if (problems.length) throw new Error(problems.join('\n'));
    return out;
  }

  /** One family by name with its validated settings, not booted (for `exocortex <family> <command>`). */
  async resolveFamily(
    settings: Settings,
    name: string,
  ): Promise<{ family: DefinedFamily; settings: Record<string, unknown> } | undefined> {
    const candidates = await this.candidates(settings);
    const sections = this.validateSections(settings, candidates);
    const found = candidates.find((c) => c.family.name === name);
    return found ? { family: found.family, settings: sections.get(name) ?? {} } : undefined;
  }

  async close(): Promise<void> {
    const gens = [...this.registry.generations.values()];
    this.registry.swap(new Map(), new Map());
    await Promise.all(gens.map((g) => g.close(5_000)));
  }
}

/** A config section's validator: unknown keys refused. Compiled once per schema (tool-compiler's cache). */
function sectionValidator(schema: object): ValidateFunction {
  return compileSchema({ additionalProperties: false, ...schema });
}

/**
 * Import the families' modules and compile their settings validators ahead of the first apply(), on this
 * thread while it would otherwise wait (the embedded database opens on its own): apply() then finds
 * both in the module cache and tool-compiler's. Never rejects: apply() reports whatever fails here.
 */
export async function preloadFamilies(
  settings: { readonly host: { readonly plugins: readonly string[] }; readonly baseDir: string },
  builtinDir?: string,
): Promise<void> {
  const { sources } = familySources(settings.host.plugins, settings.baseDir, builtinDir);
  await Promise.all(
    sources.map(async (source) => {
      try {
        const family = await importFamily(source);
        for (const schema of Object.values(family.settings ?? {})) sectionValidator(schema);
      } catch {
        // apply() imports it again and reports the failure
      }
    }),
  );
}

function orderByProvides(list: Candidate[]): Candidate[] {
  const out: Candidate[] = [];
  const pending = [...list];
  while (pending.length) {
    const i = pending.findIndex((c) => {
      const needs = (c.family.requires ?? []).map((r) => parseRequirement(r).name);
      return !pending.some((o) => o !== c && needs.some((n) => n in (o.family.provides ?? {})));
    });
    out.push(...pending.splice(Math.max(i, 0), 1));
  }
  return out;
}

/** Every settable leaf path of a settings section's JSON Schema (objects with properties are walked into). */
function schemaLeaves(schema: unknown, prefix: string[]): string[][] {
  const props = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  if (!props || typeof props !== 'object') return prefix.length > 1 ? [prefix] : [];
  const out: string[][] = [];
  for (const [key, sub] of Object.entries(props)) {
    const p = [...prefix, key];
    const nested = (sub as { properties?: unknown } | undefined)?.properties;
    if (nested && typeof nested === 'object') out.push(...schemaLeaves(sub, p));
    else out.push(p);
  }
  return out;
}
