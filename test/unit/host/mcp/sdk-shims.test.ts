// The validator the built SDK bundle uses in place of the SDK's Node shim (scripts/postbuild.mjs): it must
// answer as the SDK's own ajv validator does, and load that validator only on its first schema.
import t from 'tap';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { DefaultJsonSchemaValidator, process as shimProcess } from '../../../../src/host/mcp/sdk-shims.js';

const schema = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 2 }, when: { type: 'string', format: 'date' } },
  required: ['name'],
} as const;

t.test('answers as the SDK validator does, formats included', async (t) => {
  const ours = new DefaultJsonSchemaValidator().getValidator<{ name: string }>(schema);
  const theirs = new AjvJsonSchemaValidator().getValidator<{ name: string }>(schema);
  for (const input of [
    { name: 'ok' },
    { name: 'x' },
    {},
    { name: 'ok', when: '2026-13-40' },
    { name: 'ok', when: '2026-12-06' },
    'text',
  ]) {
    t.same(ours(input), theirs(input), JSON.stringify(input));
  }
  t.equal(ours({ name: 'ok' }).valid, true);
  t.match(ours({}).errorMessage, /required property 'name'/);
});

t.test('one validator serves many schemas, and the SDK shim names Node process', async (t) => {
  const v = new DefaultJsonSchemaValidator();
  t.equal(v.getValidator({ type: 'number' })(3).valid, true);
  t.equal(v.getValidator({ type: 'number' })('3').valid, false);
  t.equal(shimProcess, process);
});
