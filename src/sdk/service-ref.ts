// Typed service references: a family names the services it needs and offers by a ref that carries the
// service's type, so `ctx.service(INDEX)` is typed without a cast. Declarations and tiny constructors only;
// the host resolves refs in one place (its per-generation container).

/** A service by name, with its type. Create one per service with `serviceRef<T>(id)`; share the constant. */
export interface ServiceRef<T> {
  readonly id: string;
  readonly optional: false;
  /** Phantom: carries T for the type checker; never set at run time. */
  readonly __type?: T;
}

/** A `requires` entry for a service the family can work without (its tools needing it hide while absent). */
export interface OptionalServiceRef<T> {
  readonly id: string;
  readonly optional: true;
  readonly __type?: T;
}

/** What `requires` accepts: a ref, `optional(ref)`, or (deprecated) the name, with a trailing '?' when optional. */
export type ServiceRequirement = ServiceRef<any> | OptionalServiceRef<any> | string;

const ID = /^[a-z][a-z0-9-]{0,63}$/;

export function serviceRef<T>(id: string): ServiceRef<T> {
  if (!ID.test(id)) throw new TypeError(`service id "${id}" must match ${ID}`);
  return Object.freeze({ id, optional: false as const });
}

/** Mark a required ref optional for `requires`: `requires: [INDEX, optional(EMBEDDINGS)]`. */
export function optional<T>(ref: ServiceRef<T>): OptionalServiceRef<T> {
  return Object.freeze({ id: ref.id, optional: true as const });
}

/** A `requires` entry as name and optionality: 'embeddings?' and optional(EMBEDDINGS) both → { name: 'embeddings', optional: true }. */
export function parseRequirement(entry: ServiceRequirement): { name: string; optional: boolean } {
  if (typeof entry !== 'string') return { name: entry.id, optional: entry.optional };
  return entry.endsWith('?') ? { name: entry.slice(0, -1), optional: true } : { name: entry, optional: false };
}

/** The name behind a ref or a name. */
export function serviceName(ref: ServiceRequirement): string {
  return typeof ref === 'string' ? ref : ref.id;
}

/**
 * How a family reaches services: through its ctx (tools, prompts, resources, routes, service factories,
 * contributors, health). The string form stays for families written before refs.
 */
export interface ServiceLookup {
  /** The service a ref names; for an optional one that is absent, undefined (check hasService first). */
  service<T>(ref: ServiceRef<T>): T;
  /** @deprecated Pass a ServiceRef (`serviceRef<T>(name)`, or the SDK's INDEX, NOTE_WRITER, EMBEDDINGS…): the string form is untyped. */
  service<T = unknown>(name: string): T;
  hasService(ref: ServiceRequirement): boolean;
}
