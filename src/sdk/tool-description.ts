// Tool descriptions that name other tools: a passage written {{#tool_name}}…{{/tool_name}} is served only
// while that tool is listed for the caller, so a description never names a tool the caller cannot see.
// Pure; the host applies it at tools/list, the docs generator shows every passage.

const SECTION = /\{\{#([a-z][a-z0-9_]*)\}\}([\s\S]*?)\{\{\/\1\}\}/g;

/** The description with the passages of tools not in `visible` left out (and their markers removed). */
export function describeForVisible(description: string, visible: ReadonlySet<string>): string {
  if (!description.includes('{{#')) return description;
  // Passages nest (a sentence naming two tools needs both): unwrap until no marker is left.
  let out = description;
  for (let prev = ''; prev !== out; ) {
    prev = out;
    out = out.replace(SECTION, (_all, tool: string, text: string) => (visible.has(tool) ? text : ''));
  }
  return out
    .replace(/ {2,}/g, ' ')
    .replace(/ +([.,;)\n])/g, '$1')
    .trim();
}

/** Every passage kept: the full text, as the reference documentation shows it. */
export function describeAll(description: string): string {
  let out = description;
  for (let prev = ''; prev !== out; ) {
    prev = out;
    out = out.replace(SECTION, (_all, _tool: string, text: string) => text);
  }
  return out;
}

/** The tools a description's conditional passages name. */
export function conditionalTools(description: string): string[] {
  return [...description.matchAll(SECTION)].map((m) => m[1]);
}
