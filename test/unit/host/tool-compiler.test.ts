// The tool compiler: a malformed schema still fails the family's load (checked against the meta-schema), while
// the validators themselves are compiled at a tool's first call and shared by every tool with the same schema.
import t from 'tap';
import { cloneJson, compileTool } from '../../../src/host/families/tool-compiler.js';
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

t.test('validation works on a copy: defaults land in the copy, the caller keeps its arguments as sent', async (t) => {
  const tool = compileTool(
    'fam',
    'probe',
    doc({
      type: 'object',
      properties: {
        opts: { type: 'object', properties: { n: { type: 'integer', default: 3 } } },
        tags: { type: 'array' },
      },
    }),
    handler,
  );
  const args = { opts: {}, tags: ['a', { b: 1 }] };
  const input = tool.validateInput(args);
  t.same(input, { opts: { n: 3 }, tags: ['a', { b: 1 }] });
  t.same(args, { opts: {}, tags: ['a', { b: 1 }] }, 'the default went into the copy only');
  t.not((input.tags as unknown[])[1], args.tags[1], 'nested objects are copied, not shared');
});

t.test('cloneJson: an own "__proto__" stays an own property; deep nesting reaches no stack', async (t) => {
  const parsed = JSON.parse('{"__proto__": {"polluted": true}, "a": [1, {"b": null}]}') as Record<string, unknown>;
  const copy = cloneJson(parsed) as Record<string, unknown>;
  t.equal(Object.getPrototypeOf(copy), Object.prototype, 'the prototype is untouched');
  t.ok(Object.hasOwn(copy, '__proto__'), 'the key is copied as an own property');
  t.same(copy.a, [1, { b: null }]);
  let deep: unknown = 'leaf';
  for (let i = 0; i < 200_000; i++) deep = [deep];
  let c = cloneJson(deep);
  for (let i = 0; i < 200_000; i++) c = (c as unknown[])[0];
  t.equal(c, 'leaf', 'a 200,000-deep array copies without recursion');
});
