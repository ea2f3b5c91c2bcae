// Renders docs/configuration.md from the settings schemas: the host's zod schema (as JSON Schema) and each
// built-in family's settings sections. One row per setting: path, type, default, EXO_ variable, meaning.
import { z } from 'zod';
import { HOST_SECTIONS, hostSettingsSchema } from '../../src/host/settings/schema.js';
import { envName } from '../../src/host/settings/load.js';
import type { DocFamily } from './families.js';
import { GENERATED_BANNER, cell, code, table, text, typeText, valueText, type JsonSchemaNode } from './markdown.js';

const HEAD = ['Setting', 'Type', 'Default', 'Environment variable', 'Meaning'];

interface Section {
  readonly path: readonly string[];
  readonly description: string;
  readonly rows: string[][];
  readonly children: Section[];
}

const props = (s: JsonSchemaNode): Record<string, JsonSchemaNode> | undefined =>
  s.properties && typeof s.properties === 'object' ? (s.properties as Record<string, JsonSchemaNode>) : undefined;

const description = (s: JsonSchemaNode): string => (typeof s.description === 'string' ? s.description : '');

function row(p: readonly string[], s: JsonSchemaNode, env: string): string[] {
  const meaning = description(s);
  return [
    code(p.join('.')),
    typeText(s),
    'default' in s ? valueText(s.default, p.at(-1)) : '—',
    env ? code(env) : '—',
    meaning ? cell(meaning) : '**undocumented**',
  ];
}

/**
 * Walk an object schema: a property with its own `properties` is a subsection, anything else one setting
 * (the rule the loaders place EXO_ variables by). A map of objects (families.<name>) is walked under `<name>`.
 */
function walk(p: readonly string[], s: JsonSchemaNode, envOf: (leaf: readonly string[]) => string): Section {
  const rows: string[][] = [];
  const children: Section[] = [];
  for (const [key, sub] of Object.entries(props(s) ?? {})) {
    const here = [...p, key];
    const extra = sub.additionalProperties as JsonSchemaNode | undefined;
    if (props(sub)) children.push(walk(here, sub, envOf));
    else if (extra && typeof extra === 'object' && props(extra)) {
      const child = walk([...here, '<name>'], extra, envOf);
      children.push({ ...child, description: description(sub) || child.description });
    } else rows.push(row(here, sub, envOf(here)));
  }
  return { path: p, description: description(s), rows, children };
}

function render(section: Section, level: number): string[] {
  const out: string[] = [];
  out.push(`${'#'.repeat(level)} ${code(section.path.join('.'))}`, '');
  if (section.description) out.push(text(section.description), '');
  if (section.rows.length) out.push(table(HEAD, section.rows), '');
  for (const child of section.children) out.push(...render(child, Math.min(level + 1, 6)));
  return out;
}

/** A host section's description followed by when a change to it applies (its section's reload marking). */
function withReloadMode(section: Section, key: string): Section {
  const mark = HOST_SECTIONS[key as keyof typeof HOST_SECTIONS];
  if (!mark) return section;
  const restartKeys = mark.restartKeys.map((k) => code(`${key}.${k}`)).join(', ');
  const note =
    mark.reload === 'restart'
      ? '*Takes effect on restart.*'
      : `*Applied on reload*${restartKeys ? `, except ${restartKeys}, which ${mark.restartKeys.length > 1 ? 'take' : 'takes'} effect on restart` : ''}.`;
  return { ...section, description: section.description ? `${section.description} ${note}` : note };
}

/** EXO_ name of a host setting; families.<name>.* uses the placeholder, as applyEnvOverrides accepts it. */
function hostEnv(leaf: readonly string[]): string {
  return `EXO_${envName(leaf.map((part) => (part === '<name>' ? '\0' : part)))}`.replace('\0', '<NAME>');
}

export function renderConfiguration(families: readonly DocFamily[]): string {
  const host = z.toJSONSchema(hostSettingsSchema, { io: 'input' }) as JsonSchemaNode;
  const out: string[] = [
    '# Configuration reference',
    '',
    GENERATED_BANNER('src/host/settings/schema.ts and the settings sections of each family in plugins/*/family.ts'),
    '',
    'Settings come from the config file (YAML; `config/default.yaml`, or the file named by `--config` or `EXO_CONFIG`), then',
    'from environment variables: every setting below can be overridden by the variable in its row, the path in upper snake',
    "case after `EXO_` (`server.publicUrl` → `EXO_SERVER_PUBLIC_URL`). A variable's value is read as YAML when it looks like",
    '`true`, `false`, `null`, a number, a `[list]` or an `{object}`, else as a string. Everything is validated at start: an',
    'unknown key or variable, a wrong type or a value out of range refuses to start, naming the setting.',
    '',
    'Relative paths resolve against the directory the server starts in. The config file is reloaded when it changes (or on',
    'SIGHUP): family sections, `families`, `plugins` and the host sections marked "applied on reload" take effect then;',
    'a reload that changes a setting marked "takes effect on restart" keeps the old value and logs the key.',
    '',
    '## Contents',
    '',
  ];
  const hostSections: Section[] = [];
  const topRows: string[][] = [];
  for (const [key, sub] of Object.entries(props(host) ?? {})) {
    const s = walk([], { properties: { [key]: sub } }, hostEnv);
    hostSections.push(...s.children.map((c) => withReloadMode(c, key)));
    topRows.push(...s.rows);
  }
  const familySections: Array<{ family: DocFamily; sections: Section[] }> = families.map((family) => ({
    family,
    sections: Object.entries(family.definition.settings ?? {}).map(([section, schema]) =>
      walk([section], schema as JsonSchemaNode, (leaf) => `EXO_${envName(leaf)}`),
    ),
  }));
  out.push(
    '- [Host settings](#host-settings): ' +
      [...hostSections.map((s) => code(s.path.join('.'))), ...topRows.map((r) => r[0])].join(', '),
  );
  out.push(
    '- [Family settings](#family-settings): ' +
      familySections
        .filter((f) => f.sections.length)
        .map((f) => `${code(f.family.name)} (${f.sections.map((s) => code(s.path[0])).join(', ')})`)
        .join(', '),
  );
  out.push('', '## Host settings', '');
  for (const s of hostSections) out.push(...render(s, 3));
  if (topRows.length) out.push('### Other host settings', '', table(HEAD, topRows), '');
  out.push('## Family settings', '');
  out.push(
    'Each family owns top-level sections of the config file. A family switched off (`families.<name>.enabled: false`) ignores',
    'its sections; a third-party family documents its own.',
    '',
  );
  for (const { family, sections } of familySections) {
    out.push(`### Family ${code(family.name)}`, '');
    if (family.definition.description) out.push(text(family.definition.description), '');
    if (!sections.length) {
      out.push('This family has no settings.', '');
      continue;
    }
    for (const s of sections) out.push(...render(s, 4));
  }
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}
