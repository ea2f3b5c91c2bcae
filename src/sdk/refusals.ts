// The catalog of refusal codes: every expected failure a tool, the host or a family can report. Each code
// has a sentence template, whether retrying can help, and the details it carries. Nobody invents a code
// inline: host and cross-family codes live here (`Refusal` / `ctx.refuse`); a family's own codes live in
// its definition (`refusals: familyRefusals({...})`), which the host registers when the family loads.

export interface RefusalSpec {
  /** Sentence template; `{name}` placeholders are filled from details. */
  readonly sentence: string;
  /** Whether the same call could succeed later without changing its arguments. */
  readonly retryable: boolean;
  /** Names of the details this refusal carries (documentation; extra details are allowed). */
  readonly details: readonly string[];
  /** Details every refusal of this code carries, derived from the given ones (so no call site forgets them). */
  readonly derived?: (details: RefusalDetails) => RefusalDetails;
}

export const REFUSALS = {
  // request and arguments
  invalid_arguments: {
    sentence: 'The arguments do not match the tool schema: {problems}.',
    retryable: false,
    details: ['problems'],
  },
  unknown_argument: {
    sentence: 'Unknown argument "{argument}"; this tool accepts: {accepted}.',
    retryable: false,
    details: ['argument', 'accepted'],
  },
  unknown_tool: { sentence: 'There is no tool named "{tool}" on this server.', retryable: false, details: ['tool'] },
  unknown_prompt: { sentence: 'There is no prompt named "{prompt}".', retryable: false, details: ['prompt'] },
  unknown_resource: { sentence: 'No resource matches "{uri}".', retryable: false, details: ['uri'] },
  result_too_large: {
    sentence:
      'The result would be about {tokens} tokens, over the result budget of {budget} tokens ({setting}), and {tool} cannot cut it smaller: {hint}.',
    retryable: false,
    details: ['tool', 'tokens', 'budget', 'setting', 'hint'],
  },
  // auth and admission
  unauthenticated: {
    sentence: 'A valid API key or OAuth access token is required (Authorization: Bearer …).',
    retryable: false,
    details: [],
  },
  insufficient_scope: {
    sentence: 'This access token lacks the scope {scope}: {reason}; authorize again asking for it.',
    retryable: false,
    details: ['scope', 'reason'],
  },
  forbidden: { sentence: 'This credential may not do that: {reason}.', retryable: false, details: ['reason'] },
  vault_read_only: {
    sentence: 'This vault is served read-only (vault.readOnly): {tool} was refused and nothing was written.',
    retryable: false,
    details: ['tool'],
  },
  read_only: {
    sentence: 'The tool "{tool}" writes, and {who} is read-only.',
    retryable: false,
    details: ['tool', 'who'],
  },
  rate_limited: {
    sentence: 'Too many calls; try again in {retryAfterMs} ms.',
    retryable: true,
    details: ['retryAfterMs', 'bucket'],
  },
  busy: {
    sentence: 'All {limit} slots for {admission} tools {holder} are busy; try again shortly.',
    retryable: true,
    details: ['admission', 'limit', 'holder'],
  },
  quota_exceeded: {
    sentence: 'The daily quota of {limit} calls is used up; it resets at {resetsAt}.',
    retryable: true,
    details: ['limit', 'resetsAt'],
  },
  too_many_subscriptions: {
    sentence:
      'This session already holds {limit} resource subscriptions (server.maxSubscriptionsPerSession); unsubscribe from one first.',
    retryable: false,
    details: ['limit'],
  },
  timeout: {
    sentence: 'The call ran past its deadline of {timeoutMs} ms and was abandoned.',
    retryable: true,
    details: ['timeoutMs'],
  },
  worker_failed: {
    sentence:
      'The {task} work for this call ended its worker thread ({reason}); the thread was replaced and the call abandoned. The input is likely too large or too complex to process.',
    retryable: false,
    details: ['task', 'reason'],
  },
  family_unavailable: {
    sentence: 'The "{family}" family is not serving: {reason}.',
    retryable: true,
    details: ['family', 'reason'],
  },
  service_unavailable: {
    sentence: 'The "{service}" service is unavailable: {reason}.',
    retryable: true,
    details: ['service', 'reason'],
  },
  // vault paths and bytes
  invalid_path: {
    sentence: 'The path "{path}" is not allowed: {reason}.',
    retryable: false,
    details: ['path', 'reason'],
  },
  not_found: { sentence: 'Nothing exists at "{path}".', retryable: false, details: ['path'] },
  name_twin: {
    sentence:
      '"{path}" differs from the existing "{existing}" only in Unicode normalisation (NFC/NFD); Obsidian on macOS and sync clients treat the two as one file, so nothing was written. Use the existing name.',
    retryable: false,
    details: ['path', 'existing'],
  },
  already_exists: { sentence: '"{path}" already exists; it was left untouched.', retryable: false, details: ['path'] },
  is_symlink: {
    sentence: '"{path}" is a symbolic link (to "{target}"); it is not followed for this operation.',
    retryable: false,
    details: ['path', 'target'],
  },
  is_directory: { sentence: '"{path}" is a folder, not a file.', retryable: false, details: ['path'] },
  not_a_directory: { sentence: '"{path}" is not a folder.', retryable: false, details: ['path'] },
  stale_precondition: {
    sentence:
      '"{path}" changed since you read it: expected {expectedHash}, it is now {currentHash}. Nothing was written. Read it again and retry.',
    retryable: false,
    details: ['path', 'expectedHash', 'currentHash', 'current_hash', 'nothing_written'],
    // The argument names agents pass back (expected_hash) spelled the same way in the refusal.
    derived: (d) => ({ current_hash: d.currentHash ?? null, nothing_written: true }),
  },
  concurrent_write: {
    sentence: '"{path}" was changed by someone else while this write was in progress; nothing was written.',
    retryable: true,
    details: ['path', 'currentHash'],
  },
  no_incumbent: {
    sentence: 'expected_hash was given but "{path}" does not exist.',
    retryable: false,
    details: ['path'],
  },
  malformed_precondition: {
    sentence: 'expected_hash "{expectedHash}" is not of the form sha256:<64 lowercase hex>.',
    retryable: false,
    details: ['expectedHash'],
  },
  too_large: {
    sentence: '"{path}" is {size} bytes, over the limit of {limit} bytes.',
    retryable: false,
    details: ['path', 'size', 'limit'],
  },
  not_utf8: {
    sentence: '"{path}" is not valid UTF-8 (first bad byte at offset {offset}).',
    retryable: false,
    details: ['path', 'offset'],
  },
  hard_link: {
    sentence:
      '"{path}" has {links} names (hard links), so its bytes may also belong to a file outside the vault; it is not served, indexed or written. The operator can allow hard-linked files with vault.allowHardLinks.',
    retryable: false,
    details: ['path', 'links'],
  },
  unsupported_filesystem: {
    sentence: 'The vault filesystem lacks a guarantee this server needs: {reason}.',
    retryable: false,
    details: ['reason'],
  },
  // users and their vaults (operator commands, and a principal whose vault cannot be served)
  vault_overlap: {
    sentence:
      'The vault root "{root}" {relation} "{other}", the root of the vault "{otherVault}"; vault roots may not overlap, so nothing was changed.',
    retryable: false,
    details: ['root', 'relation', 'other', 'otherVault'],
  },
  vault_root_unusable: {
    sentence: 'The vault root "{root}" cannot be served: {reason}.',
    retryable: false,
    details: ['root', 'reason'],
  },
  vault_unavailable: {
    sentence:
      "This credential's vault is not being served right now: {reason}. The operator can see why in exocortex vaults list.",
    retryable: true,
    details: ['reason'],
  },
  vault_in_use: {
    sentence:
      'The vault "{vault}" is used by {users}; disable or remove them first, or remove it with --force (which disables them).',
    retryable: false,
    details: ['vault', 'users'],
  },
  vault_not_shared: {
    sentence:
      'The vault "{vault}" already serves {users} and is not shared; share it explicitly (--share, or shared: true in the config file).',
    retryable: false,
    details: ['vault', 'users'],
  },
  unknown_vault: {
    sentence: 'There is no vault named "{vault}"; see exocortex vaults list.',
    retryable: false,
    details: ['vault'],
  },
  unknown_user: {
    sentence: 'There is no user named "{user}"; see exocortex users list.',
    retryable: false,
    details: ['user'],
  },
  name_taken: {
    sentence: 'A {kind} named "{name}" already exists; nothing was changed.',
    retryable: false,
    details: ['kind', 'name'],
  },
  declared_in_config: {
    sentence: 'The {kind} "{name}" is declared in the config file ({file}), which wins over the CLI; change it there.',
    retryable: false,
    details: ['kind', 'name', 'file'],
  },
  config_contradiction: {
    sentence:
      'The config file declares the {kind} "{name}" {declared}, but the database holds a {kind} "{name}" {stored} made with the CLI; rename or remove one of the two.',
    retryable: false,
    details: ['kind', 'name', 'declared', 'stored'],
  },
  // the note-write path (NOTE_WRITER: any family's writes), moves
  precondition_required: {
    sentence:
      'This server requires expected_hash for this write; "{path}" is now {currentHash}. Read it and resend with that hash.',
    retryable: false,
    details: ['path', 'currentHash'],
  },
  precondition_unavailable: {
    sentence:
      '"{path}" is {size} bytes, over the {limit}-byte limit, so expected_hash cannot be checked against it; nothing was written.',
    retryable: false,
    details: ['path', 'size', 'limit'],
  },
  frontmatter_too_large: {
    sentence:
      'The frontmatter block of "{path}" would be {size} bytes, over the limit of {limit} bytes (notes.maxFrontmatterBytes); nothing was written. Keep large data in the body or in a file.',
    retryable: false,
    details: ['path', 'size', 'limit'],
  },
  move_aborted: {
    sentence: 'Move aborted: {reason}. Nothing was moved, rewritten or reindexed.',
    retryable: false,
    details: ['reason'],
  },
  // notes and files alike
  ambiguous_note: {
    sentence:
      '"{target}" names more than one note, as a link from the vault root would: {candidates}. Give the full path of the one you mean.',
    retryable: false,
    details: ['target', 'candidates'],
  },
  not_a_note: {
    sentence: '"{path}" is not a markdown note; use {instead} for it.',
    retryable: false,
    details: ['path', 'instead'],
  },
  // write observers (any family's) and the history family
  write_not_recorded: {
    sentence:
      'Nothing was written to "{path}": {reason}. The operator can let writes go ahead unrecorded with {setting}.',
    retryable: true,
    details: ['path', 'reason', 'setting', 'family'],
  },
  // catch-all for bugs: thrown errors are reported as this, never as a family's own code
  internal: {
    sentence: 'An internal error occurred ({reference}); it has been logged.',
    retryable: true,
    details: ['reference'],
  },
} as const satisfies Record<string, RefusalSpec>;

export type RefusalCode = keyof typeof REFUSALS;

/** A code of the shared catalog, or one a family declared. */
export type AnyRefusalCode = RefusalCode | (string & {});

/** Codes families declared, by code, with the family that owns each (filled by the host's loader). */
const familyCodes = new Map<string, { readonly owner: string; readonly spec: RefusalSpec }>();

/** The spec of a shared or registered family code, if it is one. */
export function refusalSpec(code: string): RefusalSpec | undefined {
  return Object.hasOwn(REFUSALS, code) ? (REFUSALS as Record<string, RefusalSpec>)[code] : familyCodes.get(code)?.spec;
}

/** Which family declared a code (undefined for the shared catalog's and unknown ones). */
export function refusalOwner(code: string): string | undefined {
  return familyCodes.get(code)?.owner;
}

const CODE = /^[a-z][a-z0-9_]{1,63}$/;

/**
 * Register a family's own codes (the host does this when the family loads; a reload replaces the
 * family's set). Throws naming both owners when a code is the shared catalog's or another family's.
 */
export function registerFamilyRefusals(owner: string, specs: Readonly<Record<string, RefusalSpec>>): void {
  for (const code of Object.keys(specs)) {
    if (!CODE.test(code))
      throw new Error(
        `the family ${owner} declares the refusal code "${code}", which is not lowercase letters, digits and _`,
      );
    if (Object.hasOwn(REFUSALS, code))
      throw new Error(
        `the family ${owner} declares the refusal code "${code}", which is the host's own (src/sdk/refusals.ts); pick another name`,
      );
    const held = familyCodes.get(code);
    if (held && held.owner !== owner)
      throw new Error(
        `the family ${owner} declares the refusal code "${code}", which the family ${held.owner} already owns`,
      );
  }
  for (const [code, held] of familyCodes)
    if (held.owner === owner && !Object.hasOwn(specs, code)) familyCodes.delete(code);
  for (const [code, spec] of Object.entries(specs)) familyCodes.set(code, { owner, spec });
}

/** The specs a family definition's `refusals` holds, in either form it may take. */
export function familyRefusalSpecs(family: {
  readonly refusals?: FamilyRefusals<string> | Readonly<Record<string, RefusalSpec>>;
}): Readonly<Record<string, RefusalSpec>> {
  const declared = family.refusals;
  if (!declared) return {};
  return isFamilyRefusals(declared) ? declared.specs : declared;
}

function isFamilyRefusals(v: object): v is FamilyRefusals<string> {
  return (
    typeof (v as { refuse?: unknown }).refuse === 'function' && typeof (v as { specs?: unknown }).specs === 'object'
  );
}

/** A family's codes, declared once and typed: `refusal(code, details)` builds one, `refuse` throws it. */
export interface FamilyRefusals<Codes extends string> {
  readonly specs: Readonly<Record<Codes, RefusalSpec>>;
  refusal(code: Codes, details?: RefusalDetails, message?: string): Refusal;
  refuse(code: Codes, details?: RefusalDetails, message?: string): never;
}

/**
 * Declare a family's own refusal codes (put the result in the definition's `refusals`). The wire
 * format is the same as the shared codes': a sentence from the template, then the MCP-REFUSAL line.
 */
export function familyRefusals<const Specs extends Readonly<Record<string, RefusalSpec>>>(
  specs: Specs,
): FamilyRefusals<keyof Specs & string> {
  type Codes = keyof Specs & string;
  const refusal = (code: Codes, details: RefusalDetails = {}, message?: string) =>
    new Refusal(code, details, message, specs[code]);
  return {
    specs: specs as unknown as Readonly<Record<Codes, RefusalSpec>>,
    refusal,
    refuse(code: Codes, details?: RefusalDetails, message?: string): never {
      throw refusal(code, details, message);
    },
  };
}

export type RefusalDetails = Record<string, unknown>;

/** An expected failure. Thrown by handlers (or via ctx.refuse) and rendered by the host. */
export class Refusal extends Error {
  readonly code: AnyRefusalCode;
  readonly details: RefusalDetails;
  readonly retryable: boolean;

  constructor(code: RefusalCode, details?: RefusalDetails, message?: string);
  /** A family's own code, with its spec (see familyRefusals). */
  constructor(code: string, details: RefusalDetails, message: string | undefined, spec: RefusalSpec);
  constructor(code: string, details: RefusalDetails = {}, message?: string, ownSpec?: RefusalSpec) {
    const spec = ownSpec ?? refusalSpec(code);
    if (!spec)
      throw new Error(`"${code}" is not a refusal code: add it to src/sdk/refusals.ts or to the family's refusals`);
    super(message ?? fillTemplate(spec.sentence, details));
    this.name = 'Refusal';
    this.code = code;
    this.details = spec.derived ? { ...details, ...spec.derived(details) } : details;
    this.retryable = spec.retryable;
  }
}

export function isRefusal(value: unknown): value is Refusal {
  return (
    value instanceof Refusal ||
    (typeof value === 'object' &&
      value !== null &&
      (value as { name?: unknown }).name === 'Refusal' &&
      typeof (value as { code?: unknown }).code === 'string' &&
      refusalSpec((value as { code: string }).code) !== undefined)
  );
}

export function fillTemplate(template: string, details: RefusalDetails): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => {
    const v = details[key];
    if (v === undefined || v === null) return whole === '{reason}' ? 'no reason given' : '?';
    return Array.isArray(v) ? v.join(', ') : String(v);
  });
}

export const REFUSAL_LINE_PREFIX = 'MCP-REFUSAL ';

/** The machine-readable last line of every refusal: single-line JSON, never wrapped. */
export function refusalLine(refusal: Refusal): string {
  const payload = { code: refusal.code, retryable: refusal.retryable, ...jsonSafe(refusal.details) };
  return (
    REFUSAL_LINE_PREFIX +
    JSON.stringify(payload).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`)
  );
}

/** The full text of a refusal as a client sees it: the sentence, then the contract line. */
export function renderRefusal(refusal: Refusal): string {
  const sentence = refusal.message.replace(/\r?\n/g, ' ').trim();
  return `${sentence}\n${refusalLine(refusal)}`;
}

/** Parse the contract line back out of a refusal text (used by tests and clients). */
export function parseRefusalLine(
  text: string,
): ({ code: string; retryable: boolean } & Record<string, unknown>) | undefined {
  const last = text.trimEnd().split('\n').pop() ?? '';
  if (!last.startsWith(REFUSAL_LINE_PREFIX)) return undefined;
  try {
    return JSON.parse(last.slice(REFUSAL_LINE_PREFIX.length));
  } catch {
    return undefined;
  }
}

function jsonSafe(details: RefusalDetails): RefusalDetails {
  const out: RefusalDetails = {};
  for (const [k, v] of Object.entries(details)) {
    if (k === 'code' || k === 'retryable' || v === undefined) continue;
    out[k] = typeof v === 'bigint' ? Number(v) : v;
  }
  return out;
}
