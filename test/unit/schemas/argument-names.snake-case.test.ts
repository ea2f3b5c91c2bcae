// Every tool argument under schemas/ — top-level and nested in objects and arrays — is snake_case, the one
// naming convention of the tool surface (docs/conventions.md). Fails naming each tool and argument that is not.
import t from 'tap';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const schemaDir = fileURLToPath(new URL('../../../schemas/', import.meta.url));
const SNAKE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

function argumentNames(schema: unknown, at: string, out: string[]): void {
  if (!schema || typeof schema !== 'object') return;
  const s = schema as Record<string, unknown>;
  for (const [name, sub] of Object.entries((s.properties ?? {}) as Record<string, unknown>)) {
    out.push(`${at}${name}`);
    argumentNames(sub, `${at}${name}.`, out);
  }
  for (const key of ['items', 'oneOf', 'anyOf', 'allOf', 'additionalProperties']) {
    const v = s[key];
    for (const sub of Array.isArray(v) ? v : [v]) argumentNames(sub, at, out);
  }
}

t.test('argument-names.snake-case: every tool argument is snake_case', async (t) => {
  const offenders: string[] = [];
  let tools = 0;
  for (const family of readdirSync(schemaDir).filter((f) => statSync(path.join(schemaDir, f)).isDirectory())) {
    for (const file of readdirSync(path.join(schemaDir, family)).filter((f) => f.endsWith('.json'))) {
      const doc = JSON.parse(readFileSync(path.join(schemaDir, family, file), 'utf8')) as {
        name: string;
        inputSchema: unknown;
        writesOnlyWith?: string[];
      };
      const names: string[] = [];
      argumentNames(doc.inputSchema, '', names);
      for (const n of [...names, ...(doc.writesOnlyWith ?? [])])
        if (!n.split('.').every((p) => SNAKE.test(p))) offenders.push(`${doc.name}: ${n}`);
      tools++;
    }
  }
  t.ok(tools > 30, `read ${tools} tool schemas`);
  t.same(offenders, [], 'rename these to snake_case (no aliases: the surface is pre-1.0)');
});
