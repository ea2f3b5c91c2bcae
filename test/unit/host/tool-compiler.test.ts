// The tool compiler: a malformed schema still fails the family's load (checked against the meta-schema), while
// the validators themselves are compiled at a tool's first call and shared by every tool with the same schema.
import t from 'tap';
import { compileTool } from '../../../src/host/families/tool-compiler.js';
import type { ToolModule, ToolSchemaDocument } from '../../../src/sdk/types.js';

const handler = { handler: async () => ({}) } as unknown as ToolModule;

function doc(inputSchema: object, outputSchema?: object): ToolSchemaDocument {
  return {
    name: 'probe',
    title: 'Probe',
    description: 'A tool the compiler test defines.',
    admission: 'read',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    inputSchema,
    ...(outputSchema ? { outputSchema } : {}),
  } as unknown as ToolSchemaDocument;
}

t.test('a malformed input or output schema fails at load, naming the tool and the schema', async (t) => {
  t.throws(
    () => compileTool('fam', 'probe', doc({ type: 'object', properties: { n: { type: 'integr' } } }), handler),
    /family fam, tool probe: inputSchema is not a valid JSON Schema/,
  );
  t.throws(
    () => compileTool('fam', 'probe', doc({ type: 'object' }, { type: 'object', required: 'x' }), handler),
    /family fam, tool probe: outputSchema is not a valid JSON Schema/,
  );
});

t.test('a valid tool validates its arguments and output at its calls', async (t) => {
  const tool = compileTool(
    'fam',
    'probe',
    doc(
      { type: 'object', properties: { n: { type: 'integer', default: 3 } } },
      { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
    ),
    handler,
  );
  t.same(tool.validateInput({}), { n: 3 }, 'defaults applied');
  t.throws(() => tool.validateInput({ n: 'x' }), { code: 'invalid_arguments' });
  t.throws(() => tool.validateInput({ m: 1 }), { code: 'unknown_argument' });
  t.equal(tool.checkOutput({ ok: true }), undefined);
  t.match(tool.checkOutput({}), /ok/);
});
