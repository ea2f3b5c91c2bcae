// defineFamily: the single entry point of the plugin contract. A family module default-exports
// the value this returns; the host's loader validates it and never needs anything else from it.

import type {
  Database,
  HealthContext,
  ContributorFactoryContext,
  ChangeOrigin,
  Principal,
  FamilyCommand,
  FamilyMigration,
  FamilyRoutes,
  IndexContributor,
  JsonSchema,
  PromptDefinition,
  ResourceDefinition,
  ServiceProvider,
  ToolModule,
  ToolSignatures,
  ToolsOf,
} from './types.js';
import type { FamilyRefusals, RefusalSpec } from './refusals.js';
import type { WriteObserverDeclaration } from './write-hooks.js';
import type { ServiceRequirement } from './service-ref.js';

export { parseRequirement } from './service-ref.js';

/** The tools of a family that names no generated tool map: any modules, checked only at run time. */
export type UntypedTools = { readonly [tool: string]: { readonly input: any; readonly output: any } };

/**
 * What a family declares. `Tools` is the family's generated tool map (`defineFamily<NotesTools>({…})`): `tools`
 * must then hold exactly its tools, each typed from its schema.
 */
export interface FamilyDefinition<Tools extends ToolSignatures<Tools> = UntypedTools> {
  /** Config key (`families.<name>`) and owner of its tools. Lowercase, digits, `-`. */
  readonly name: string;
  readonly description?: string;
  /**
   * Services this family needs, as typed refs: host services (INDEX, RESOURCE_EVENTS, WRITE_OBSERVERS…) or
   * ones another family provides (EMBEDDINGS, NOTE_WRITER, or a third party's `serviceRef<T>(id)`);
   * `optional(ref)` marks one the family can do without. Names ('index', 'embeddings?') still work
   * (deprecated: untyped).
   */
  readonly requires?: readonly ServiceRequirement[];
  /** Services this family offers to the others, by ref id (`[MY_REF.id]: provider`), created once per generation. */
  readonly provides?: Readonly<Record<string, ServiceProvider>>;
  /** Folder holding one `<tool>.json` schema document per tool in `tools`. */
  readonly schemas?: URL;
  readonly tools?: ToolsOf<Tools>;
  /** Ordered by key; recorded in the family's own migration table. */
  readonly migrations?: Readonly<Record<string, FamilyMigration>>;
  /**
   * Index contributors. A function receives the generation's settings and service lookups (built
   * once per generation, when it boots), so contributors can read settings and services.
   */
  readonly indexers?:
    | readonly IndexContributor<any>[]
    | ((ctx: ContributorFactoryContext) => readonly IndexContributor<any>[]);
  /**
   * Observers of writes made through the tools (before a note or file is replaced, moved or removed, with
   * the incumbent's bytes; after the write): the history family keeps prior versions this way. Like
   * `indexers`, a function builds them once per generation from its settings and service lookups.
   */
  readonly writeObservers?: WriteObserverDeclaration;
  readonly routes?: FamilyRoutes;
  readonly prompts?: Readonly<Record<string, PromptDefinition>>;
  readonly resources?: readonly ResourceDefinition[];
  /**
   * Top-level config sections this family owns, each a JSON Schema (with defaults). The host
   * validates them when the family loads and hands the result to handlers as ctx.settings.
   */
  readonly settings?: Readonly<Record<string, JsonSchema>>;
  /**
   * The largest MCP request body this family's tools may legitimately need (e.g. a base64 write at
   * the family's write cap), from its validated settings. The host raises its HTTP body limit to
   * the largest of these, so such calls reach the tool and get its own refusal instead of a 413.
   */
  readonly requestBodyBytes?: (settings: Readonly<Record<string, unknown>>) => number;
  /**
   * Counts and states for /health, /metrics and the panel's overview (never paths, text from users, or
   * secrets), e.g. an embedding backlog — of one vault, `ctx.vaultId`: the host calls it once per served
   * vault per /health request or scrape, with a short deadline; keep it to cheap queries.
   */
  readonly health?: (ctx: HealthContext) => Promise<Readonly<Record<string, number | boolean | string>>>;
  /**
   * The fields of `health` whose sum is this family's backlog of work in a vault (the search family:
   * `queued` + `stale`, notes waiting for embeddings). /metrics exports it as
   * `exocortex_<name>_backlog{vault}` with `help`, and the overview shows it per vault. A vault whose
   * health lacks one of the fields, or whose boolean field `when` is not true (search: `semantic`, since
   * nothing embeds while it is off), has no sample.
   */
  readonly healthBacklog?: HealthBacklog;
  /** Operator commands, run as `exocortex <family> <command> [args]` (e.g. `exocortex search rebuild-keyword`). */
  readonly commands?: Readonly<Record<string, FamilyCommand>>;
  /**
   * The family's own refusal codes (`familyRefusals({...})`, or its `.specs`): registered when the family
   * loads, listed in docs/refusals.md for built-in families. A code may not be the host's or another family's.
   */
  readonly refusals?: FamilyRefusals<string> | Readonly<Record<string, RefusalSpec>>;
  /**
   * Delete this family's rows of vaults that no longer exist (rows tied to a note go with it by
   * cascade; rows keyed only by `vault_id` do not). The host calls it after a vault is removed and once
   * at start (a vault may have been removed while no server ran), with the ids of the vaults that remain.
   */
  readonly pruneVaults?: (db: Database, remaining: readonly number[]) => Promise<void>;
}

/** A `pruneVaults` for tables keyed by `vault_id` alone: each loses its rows of the vaults not in `remaining`. */
export function pruneVaultTables(...tables: readonly string[]): NonNullable<FamilyDefinition['pruneVaults']> {
  return async (db, remaining) => {
    for (const table of tables)
      await db
        .deleteFrom(table)
        .where((eb) => (remaining.length ? eb('vault_id', 'not in', [...remaining]) : eb.lit(true)))
        .execute();
  };
}

/** What a family's backlog is made of (see FamilyDefinition.healthBacklog). */
export interface HealthBacklog {
  readonly name: string;
  readonly fields: readonly string[];
  readonly help: string;
  readonly when?: string;
}

/** The backlog a family's health fields add up to, or undefined where it is off or a field is missing. */
export function backlogOf(fields: unknown, b: Pick<HealthBacklog, 'fields' | 'when'>): number | undefined {
  if (typeof fields !== 'object' || fields === null) return undefined;
  const f = fields as Record<string, unknown>;
  if (b.when !== undefined && f[b.when] !== true) return undefined;
  let n = 0;
  for (const name of b.fields) {
    const v = f[name];
    if (typeof v !== 'number' || !Number.isFinite(v)) return undefined;
    n += v;
  }
  return n;
}

export const FAMILY_BRAND = Symbol.for('exocortex.family');

export type DefinedFamily = FamilyDefinition & { readonly [FAMILY_BRAND]: true };

const NAME = /^[a-z][a-z0-9-]{0,39}$/;

export function defineFamily<Tools extends ToolSignatures<Tools> = UntypedTools>(
  definition: FamilyDefinition<NoInfer<Tools>>,
): DefinedFamily {
  if (!NAME.test(definition.name)) {
    throw new TypeError(`family name "${definition.name}" must match ${NAME}`);
  }
  for (const [tool, mod] of Object.entries<ToolModule>(definition.tools ?? {})) {
    if (typeof mod?.handler !== 'function')
      throw new TypeError(`family ${definition.name}: tool ${tool} has no handler`);
  }
  if (definition.tools && Object.keys(definition.tools).length > 0 && !definition.schemas) {
    throw new TypeError(`family ${definition.name}: tools need a schemas folder`);
  }
  if (definition.healthBacklog) {
    const b = definition.healthBacklog;
    if (!/^[a-z][a-z0-9_]{0,39}$/.test(b.name) || b.fields.length === 0 || !definition.health)
      throw new TypeError(
        `family ${definition.name}: healthBacklog needs a health hook, a name matching [a-z][a-z0-9_]* and fields`,
      );
  }
  return Object.freeze({ ...definition, [FAMILY_BRAND]: true as const });
}

export function isDefinedFamily(value: unknown): value is DefinedFamily {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[FAMILY_BRAND] === true;
}

/** The change origin to hand the index for a write made by this principal (change-feed attribution). */
export function originOf(principal: Principal): ChangeOrigin {
  return { kind: principal.kind, id: principal.id, name: principal.name };
}
