// Renders docs/tools.md from schemas/<family>/<tool>.json and the built-in families' definitions: every tool
// (title, description, annotations, admission class, arguments, result fields), resource and prompt.
import type { DocFamily } from './families.js';
import {
  GENERATED_BANNER,
  anchor,
  cell,
  code,
  table,
  text,
  typeText,
  valueText,
  type JsonSchemaNode,
} from './markdown.js';
import type { ToolSchemaDocument } from '../../src/sdk/types.js';
import { describeAll } from '../../src/sdk/tool-description.js';

const props = (s: JsonSchemaNode | undefined): Record<string, JsonSchemaNode> =>
  s && s.properties && typeof s.properties === 'object' ? (s.properties as Record<string, JsonSchemaNode>) : {};
const required = (s: JsonSchemaNode | undefined): Set<string> =>
  new Set(Array.isArray(s?.required) ? (s!.required as string[]) : []);

interface Field {
  readonly path: string;
  readonly schema: JsonSchemaNode;
  readonly required: boolean;
}

/** Fields of an object schema, nested objects and arrays of objects flattened as `a.b` and `a[].b`. */
function fields(s: JsonSchemaNode | undefined, prefix = ''): Field[] {
  const alternatives = s?.anyOf ?? s?.oneOf;
  if (Array.isArray(alternatives)) return unionFields(alternatives as JsonSchemaNode[], prefix);
  const out: Field[] = [];
  const req = required(s);
  for (const [name, sub] of Object.entries(props(s))) {
    const p = `${prefix}${name}`;
    out.push({ path: p, schema: sub, required: req.has(name) });
    if (Object.keys(props(sub)).length) out.push(...fields(sub, `${p}.`));
    const items = sub.items as JsonSchemaNode | undefined;
    if (
      items &&
      typeof items === 'object' &&
      (Object.keys(props(items)).length || Array.isArray(items.anyOf ?? items.oneOf))
    )
      out.push(...fields(items, `${p}[].`));
  }
  return out;
}

/** The fields of alternative object shapes (an entry that is a note or an error), each once: always present only when every shape has it. */
function unionFields(alternatives: JsonSchemaNode[], prefix: string): Field[] {
  const byPath = new Map<string, Field>();
  const seen = new Map<string, number>();
  for (const alt of alternatives) {
    for (const f of fields(alt, prefix)) {
      const had = byPath.get(f.path);
      byPath.set(f.path, had ? { ...had, required: had.required && f.required } : f);
      seen.set(f.path, (seen.get(f.path) ?? 0) + 1);
    }
  }
  return [...byPath.values()].map((f) => (seen.get(f.path) === alternatives.length ? f : { ...f, required: false }));
}

const describe = (s: JsonSchemaNode) => (typeof s.description === 'string' ? cell(s.description) : '');

function annotationsLine(doc: ToolSchemaDocument): string {
  const a = doc.annotations;
  const words = [
    a.readOnlyHint ? 'read-only' : 'writes',
    a.destructiveHint ? 'destructive' : 'not destructive',
    a.idempotentHint ? 'idempotent' : 'not idempotent',
    a.openWorldHint ? 'open world' : 'closed world',
  ];
  const needs = doc.requiresServices?.length
    ? ` · needs the ${doc.requiresServices.map(code).join(', ')} service (hidden and refused without it)`
    : '';
  return `${words.join(' · ')} · admission class ${code(doc.admission)}${needs}`;
}

/** A description's lines as markdown: list lines stay one list, every other line is a paragraph. */
function prose(description: string): string[] {
  const out: string[] = [];
  let inList = false;
  for (const raw of description.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const item = /^([-*]|\d+[.)])\s/.test(line);
    if (out.length && !(item && inList)) out.push('');
    out.push(text(line).replace(/^#/, '\\#'));
    inList = item;
  }
  return out;
}

/**
 * How a tool's answer continues, from its schema: a cursor (next_cursor → cursor), a window (next_offset →
 * offset) or the change feed's since; `Dry run:` on the argument's description limits it to dry runs.
 */
function pagingLine(doc: ToolSchemaDocument): string | undefined {
  const props = (doc.inputSchema.properties ?? {}) as Record<string, JsonSchemaNode>;
  const outProps = ((doc.outputSchema ?? {}).properties ?? {}) as Record<string, unknown>;
  const only = (arg: string) =>
    typeof props[arg]?.description === 'string' && (props[arg].description as string).startsWith('Dry run:')
      ? ' (dry runs only)'
      : '';
  const sizing = ['limit', 'count', 'max_chars'].find((a) => a in props);
  const may = sizing ? `; ${code(sizing)} may change` : '';
  if ('cursor' in props && 'next_cursor' in outProps)
    return `Paging${only('cursor')}: pass the answer's ${code('next_cursor')} as ${code('cursor')} (same arguments${may}) until it is null.`;
  // fetch keeps the connector's fixed fields at the top and its window in metadata.
  const meta = (outProps.metadata as JsonSchemaNode | undefined)?.properties as Record<string, unknown> | undefined;
  const nextOffset =
    'next_offset' in outProps ? 'next_offset' : meta && 'next_offset' in meta ? 'metadata.next_offset' : null;
  if ('offset' in props && nextOffset)
    return `Window${only('offset')}: pass the answer's ${code(nextOffset)} as ${code('offset')} for the next window until it is absent or null.`;
  if ('since' in props && 'next_since' in outProps && 'more' in outProps)
    return `Paging: pass the answer's ${code('next_since')} as ${code('since')} (same arguments${may}) while ${code('more')} is true.`;
  return undefined;
}

function renderTool(family: string, doc: ToolSchemaDocument, file: string): string[] {
  const out = [
    `### ${code(doc.name)} — ${text(doc.title)}`,
    '',
    `Family ${code(family)} · ${annotationsLine(doc)} · schema ${code(file)}`,
    '',
  ];
  out.push(...prose(describeAll(doc.description)), '');
  if (doc.details) out.push(...prose(doc.details), '');
  out.push(`Profiles: ${['full', ...(doc.profiles ?? [])].map(code).join(', ')}.`, '');
  const paging = pagingLine(doc);
  if (paging) out.push(paging, '');
  const args = fields(doc.inputSchema);
  out.push('**Arguments**', '');
  if (args.length) {
    out.push(
      table(
        ['Argument', 'Type', 'Required', 'Default', 'Description'],
        args.map((f) => [
          code(f.path),
          typeText(f.schema),
          f.required ? 'yes' : 'no',
          'default' in f.schema ? valueText(f.schema.default, f.path.split('.').at(-1)) : '',
          describe(f.schema),
        ]),
      ),
      '',
    );
  } else out.push('None.', '');
  const result = fields(doc.outputSchema);
  out.push('**Result** (`structuredContent`)', '');
  if (result.length) {
    out.push(
      table(
        ['Field', 'Type', 'Always present', 'Description'],
        result.map((f) => [code(f.path), typeText(f.schema), f.required ? 'yes' : 'no', describe(f.schema)]),
      ),
      '',
    );
  } else
    out.push(
      doc.outputSchema ? 'An object with no declared fields.' : 'No structured result; the text content only.',
      '',
    );
  return out;
}

function renderResources(f: DocFamily): string[] {
  const resources = f.definition.resources ?? [];
  if (!resources.length) return [];
  return [
    `### Resources of ${code(f.name)}`,
    '',
    table(
      ['URI', 'Name', 'Title', 'MIME type', 'Description'],
      resources.map((r) => [
        code(r.uri ?? r.uriTemplate ?? ''),
        code(r.name),
        cell(r.title ?? ''),
        r.mimeType ? code(r.mimeType) : '',
        cell(r.description ?? ''),
      ]),
    ),
    '',
  ];
}

function renderPrompts(f: DocFamily): string[] {
  const prompts = Object.entries(f.definition.prompts ?? {});
  if (!prompts.length) return [];
  return [
    `### Prompts of ${code(f.name)}`,
    '',
    table(
      ['Prompt', 'Title', 'Arguments', 'Description'],
      prompts.map(([name, p]) => [
        code(name),
        cell(p.title ?? ''),
        (p.arguments ?? [])
          .map(
            (a) =>
              `${code(a.name)}${a.required ? ' (required)' : ''}${a.description ? `: ${cell(a.description)}` : ''}`,
          )
          .join('<br>') || 'none',
        cell(p.description),
      ]),
    ),
    '',
  ];
}

export function renderTools(families: readonly DocFamily[]): string {
  const toolCount = families.reduce((n, f) => n + f.tools.length, 0);
  const out: string[] = [
    '# Tool reference',
    '',
    GENERATED_BANNER('schemas/<family>/<tool>.json and the resources and prompts in plugins/*/family.ts'),
    '',
    `${toolCount} tools in ${families.length} built-in families. Arguments are snake_case; an unknown argument is refused. A tool`,
    'answers with `structuredContent` (the fields listed under **Result**) and a compact text rendering of it; an expected',
    'failure is a refusal (`isError: true`, a sentence, and a last line `MCP-REFUSAL {"code":…}`; codes in',
    '[refusals.md](refusals.md)).',
    '',
    '**Paging.** Every tool whose answer can outgrow the result budget (`tools.maxResultTokens`) pages: a listing takes',
    '`cursor` and answers `next_cursor` (opaque, bound to the user, the vault, the tool and the query; pass it back with the',
    'same arguments, `limit` may change), a long document takes `offset` and answers `next_offset`. An answer over the',
    'budget is cut to a smaller page or window that says how to continue (`budget_notice`, `continue_with`), never refused.',
    'A search pages through its best `search.maxLimit` hits, `find_related` through its best `graph.relatedCap` notes.',
    'Offsets are positions in the answer as it is when each page is asked for: a note added or removed between pages can',
    'shift a row across the page boundary. A dry run of `undo_changes` pages its plan and one of `restore_revision`',
    "windows its diff. `result_too_large` remains only for a write's report (`move_note`, `move_file`, `rename_tag`, an",
    '`undo_changes` that writes), made once and never run again to shrink it, and for `get_note_outline`, whose outline is',
    'already cut to `notes.read.maxChars` (its `omitted` counts the headings left out).',
    '',
    '**Profiles.** `tools.profile` chooses which tools are listed and callable: `full` (the default) every tool of the',
    'enabled families, `core` the dozen tools marked *core* below. A tool description mentions another tool only while',
    'that tool is listed for the caller.',
    '',
    'Annotations are served as written: *read-only* tools never change the vault, *destructive* ones may remove or overwrite',
    'data, *idempotent* ones can be repeated with the same effect, *open world* ones reach outside the vault. Read-only',
    'families and read-only credentials do not see write tools. The admission class picks the concurrency slots a call',
    'waits for (`admission.concurrency.*` in [configuration.md](configuration.md)).',
    '',
    '## Contents',
    '',
  ];
  for (const f of families) {
    const extras = [
      (f.definition.resources ?? []).length ? 'resources' : '',
      Object.keys(f.definition.prompts ?? {}).length ? 'prompts' : '',
    ].filter(Boolean);
    const heading = `Family ${f.name}`;
    out.push(
      `- [${heading}](#${anchor(heading)}): ${f.tools.map((t) => `[${code(t.schema.name)}](#${anchor(`${t.schema.name} — ${t.schema.title}`)})`).join(', ')}${extras.length ? ` (and ${extras.join(', ')})` : ''}`,
    );
  }
  out.push('');
  for (const f of families) {
    out.push(`## Family ${f.name}`, '');
    if (f.definition.description) out.push(text(f.definition.description), '');
    out.push(
      table(
        ['Tool', 'Title', 'Annotations'],
        f.tools.map((t) => [code(t.schema.name), cell(t.schema.title), cell(annotationsLine(t.schema))]),
      ),
      '',
    );
    for (const t of f.tools) out.push(...renderTool(f.name, t.schema, t.file));
    out.push(...renderResources(f), ...renderPrompts(f));
  }
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}
