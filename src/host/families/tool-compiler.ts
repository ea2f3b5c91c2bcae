// Turns a family's schema documents plus handlers into compiled tools: one ajv validator per tool
// for arguments (undeclared arguments refused by name) and one for outputs (a mismatch is a bug).
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { Refusal } from '../../sdk/refusals.js';
import type { DefinedFamily } from '../../sdk/define-family.js';
import type { AdmissionClass, JsonSchema, ToolModule, ToolSchemaDocument } from '../../sdk/types.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export interface CompiledTool {
  readonly name: string;
  readonly family: string;
  readonly schema: ToolSchemaDocument;
  readonly module: ToolModule;
  /** Whether the tool changes the vault (hidden and refused for read-only families and principals). */
  readonly writes: boolean;
  /** Arguments that make a call of a reading tool write (see ToolSchemaDocument.writesOnlyWith). */
  readonly writesWith: readonly string[];
  readonly acceptedArguments: readonly string[];
  validateInput(args: unknown): Record<string, unknown>;
  checkOutput(output: unknown): string | undefined;
}

const ADMISSION: readonly AdmissionClass[] = ['read', 'write', 'expensive'];
const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

/**
 * The process's one ajv. Validators are compiled once per schema text: ajv caches by object identity, and
 * schema files are parsed anew on every load, so a family reloaded (or a second host in one process, as
 * tests start them) would otherwise compile identical schemas again (~1 s of CPU for the built-in
 * families). Bounded: past the limit the oldest go first.
 */
let ajv: Ajv2020 | undefined;
const compiled = new Map<string, ValidateFunction>();
const COMPILED_LIMIT = 4096;

function theAjv(): Ajv2020 {
  ajv ??= addFormats(
    new Ajv2020({ allErrors: true, strict: false, useDefaults: true, coerceTypes: false, validateFormats: true }),
  );
  return ajv;
}

export function compileSchema(schema: object): ValidateFunction {
  const key = JSON.stringify(schema);
  const hit = compiled.get(key);
  if (hit) return hit;
  const a = theAjv();
  const validate = a.compile(schema);
  a.removeSchema(schema); // the validator is kept here; ajv need not keep the schema object too
  if (compiled.size >= COMPILED_LIMIT) compiled.delete(compiled.keys().next().value as string);
  compiled.set(key, validate);
  return validate;
}

export async function compileFamilyTools(family: DefinedFamily): Promise<CompiledTool[]> {
  const handlers = family.tools ?? {};
  const names = Object.keys(handlers);
  if (names.length === 0) return [];
  const dir = family.schemas!;
  const files = new Set((await readdir(fileURLToPath(dir))).filter((f) => f.endsWith('.json')));
  for (const file of files) {
    const tool = file.slice(0, -'.json'.length);
    if (!(tool in handlers)) throw new Error(`family ${family.name}: schema ${file} has no handler in tools`);
  }
  const out: CompiledTool[] = [];
  for (const name of names) {
    if (!files.has(`${name}.json`))
      throw new Error(`family ${family.name}: tool ${name} has no schema ${name}.json in ${fileURLToPath(dir)}`);
    const raw = JSON.parse(await readFile(new URL(`${name}.json`, dir), 'utf8')) as ToolSchemaDocument;
    out.push(compileTool(family.name, name, raw, handlers[name]));
  }
  return out;
}

export function compileTool(family: string, name: string, doc: ToolSchemaDocument, module: ToolModule): CompiledTool {
  const where = `family ${family}, tool ${name}`;
  if (doc.name !== name) throw new Error(`${where}: schema name "${doc.name}" differs from its file name`);
  if (!/^[a-z][a-z0-9_]{0,63}$/.test(name)) throw new Error(`${where}: tool names are lowercase snake_case`);
  if (typeof doc.title !== 'string' || typeof doc.description !== 'string' || doc.description.length < 10) {
    throw new Error(`${where}: title and a description are required`);
  }
  for (const hint of HINTS) {
    if (typeof doc.annotations?.[hint] !== 'boolean')
      throw new Error(`${where}: annotations.${hint} must be set explicitly (true or false)`);
  }
  if (!ADMISSION.includes(doc.admission)) throw new Error(`${where}: admission must be one of ${ADMISSION.join(', ')}`);
  if ((doc.inputSchema as { type?: unknown })?.type !== 'object')
    throw new Error(`${where}: inputSchema must be an object schema`);
  const inputSchema = { additionalProperties: false, ...doc.inputSchema };
  checkSchema(where, 'inputSchema', inputSchema);
  // Validators are compiled at a tool's first call, not at load: a process that serves a few of the ~60
  // tools (a CLI command, a stdio session, a test) never pays for the others (~0.4 CPU-s for all of them).
  const validate = lazily(inputSchema);
  const paging = module.paging;
  if (paging) {
    const arg = ((inputSchema as { properties?: Record<string, { type?: unknown }> }).properties ?? {})[paging.limit];
    if (arg?.type !== 'integer')
      throw new Error(`${where}: paging.limit "${paging.limit}" must name an integer argument of the inputSchema`);
  }
  let outputSchema = doc.outputSchema && doc.answersFromIndex ? withIndexLag(doc.outputSchema) : doc.outputSchema;
  if (outputSchema && paging) outputSchema = withBudgetCut(outputSchema);
  if (outputSchema) checkSchema(where, 'outputSchema', outputSchema);
  const validateOut = outputSchema ? lazily(outputSchema) : undefined;
  const accepted = Object.keys((inputSchema as { properties?: object }).properties ?? {});
  return {
    name,
    family,
    schema: { ...doc, inputSchema, ...(outputSchema ? { outputSchema } : {}) },
    module,
    writes: (doc.admission === 'write' || doc.annotations.readOnlyHint === false) && !doc.writesOnlyWith?.length,
    writesWith: doc.writesOnlyWith ?? [],
    acceptedArguments: accepted,
    validateInput(args: unknown): Record<string, unknown> {
      // ajv applies defaults in place: validate a copy so the caller's object is untouched.
      const copy = cloneJson(args ?? {}) as Record<string, unknown>;
      const v = validate();
      if (v(copy)) return copy;
      throw argumentsRefusal(v.errors ?? [], accepted);
    },
    checkOutput(output: unknown): string | undefined {
      const v = validateOut?.();
      if (!v || v(output)) return undefined;
      return describeErrors(v.errors ?? []);
    },
  };
}

/** A schema's validator, compiled when first asked for. */
function lazily(schema: object): () => ValidateFunction {
  let validate: ValidateFunction | undefined;
  return () => {
    validate ??= compileSchema(schema);
    return validate;
  };
}

/** A malformed schema still fails the family's load, as compiling it there did: checked against the meta-schema. */
function checkSchema(where: string, which: string, schema: object): void {
  const a = theAjv();
  if (!a.validateSchema(schema))
    throw new Error(`${where}: ${which} is not a valid JSON Schema: ${a.errorsText(a.errors, { dataVar: which })}`);
}

function argumentsRefusal(errors: ErrorObject[], accepted: readonly string[]): Refusal {
  const unknown = errors.find((e) => e.keyword === 'additionalProperties' && e.instancePath === '');
  if (unknown) {
    return new Refusal('unknown_argument', {
      argument: (unknown.params as { additionalProperty: string }).additionalProperty,
      accepted: accepted.length ? accepted : ['(none)'],
    });
  }
  return new Refusal('invalid_arguments', { problems: describeErrors(errors) });
}

export function describeErrors(errors: ErrorObject[]): string {
  const seen = new Set<string>();
  for (const e of errors) {
    const at = e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : 'arguments';
    let msg: string;
    if (e.keyword === 'required')
      msg = `missing required argument "${(e.params as { missingProperty: string }).missingProperty}"`;
    else if (e.keyword === 'enum')
      msg = `${at} must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    else if (e.keyword === 'additionalProperties')
      msg = `${at} has an unknown field "${(e.params as { additionalProperty: string }).additionalProperty}"`;
    else msg = `${at} ${e.message ?? 'is invalid'}`;
    seen.add(msg);
    if (seen.size >= 5) break;
  }
  return [...seen].join('; ');
}

/** The two fields the host adds to an index-backed tool's result while the index lags (see answersFromIndex). */
function withIndexLag(schema: JsonSchema): JsonSchema {
  const props = (schema as { properties?: Record<string, unknown> }).properties ?? {};
  return {
    ...schema,
    properties: {
      ...props,
      index_pending: {
        type: 'integer',
        minimum: 0,
        description: 'Present while the index lags the vault: notes likely missing from this answer.',
      },
      index_notice: {
        type: 'string',
        description: 'Present while the index lags the vault: what is missing, in one sentence.',
      },
    },
  };
}

/** The two fields the host adds to a paging tool's result when it cut the answer to the result budget. */
function withBudgetCut(schema: JsonSchema): JsonSchema {
  const props = (schema as { properties?: Record<string, unknown> }).properties ?? {};
  return {
    ...schema,
    properties: {
      ...props,
      budget_notice: {
        type: 'string',
        description:
          'Present when the answer was cut to fit the result budget (tools.maxResultTokens): what was lowered, and the call that continues.',
      },
      continue_with: {
        type: 'object',
        description:
          'Present when the answer was cut to fit the result budget and more remains: the tool and arguments of the call that continues.',
        properties: { tool: { type: 'string' }, arguments: { type: 'object' } },
        required: ['tool', 'arguments'],
      },
    },
  };
}

/**
 * A copy of JSON-shaped arguments: plain objects and arrays are copied, anything else (strings, numbers,
 * other objects) is shared. Iterative, so no nesting depth reaches the stack; a fraction of structuredClone's
 * cost on the small objects most calls send.
 */
export function cloneJson(value: unknown): unknown {
  const copyOf = (v: unknown): unknown => {
    if (Array.isArray(v)) return new Array<unknown>(v.length);
    if (typeof v === 'object' && v !== null) {
      const proto = Object.getPrototypeOf(v);
      if (proto === Object.prototype || proto === null) return {};
    }
    return v;
  };
  const root = copyOf(value);
  const stack: Array<[Record<string, unknown>, Record<string, unknown>]> = [];
  if (root !== value) stack.push([value as Record<string, unknown>, root as Record<string, unknown>]);
  while (stack.length) {
    const [from, to] = stack.pop()!;
    for (const key of Object.keys(from)) {
      const v = from[key];
      const c = copyOf(v);
      if (c !== v) stack.push([v as Record<string, unknown>, c as Record<string, unknown>]);
      // An own "__proto__" (JSON.parse makes one) stays an own property, never the copy's prototype.
      if (key === '__proto__')
        Object.defineProperty(to, key, { value: c, writable: true, enumerable: true, configurable: true });
      else to[key] = c;
    }
  }
  return root;
}
