// SEP-2243 Mcp-Param-* checks against a tool's arguments: base64 sentinel decoding, missing and
// mismatched headers, numbers compared as numbers, nested and undeclared arguments.
import t from 'tap';
import {
  decodeParamHeader,
  paramHeaderDeclarations,
  paramHeaderMismatch,
} from '../../../../src/host/mcp/param-headers.js';

const schema = {
  type: 'object',
  properties: {
    region: { type: 'string', 'x-mcp-header': 'Region' },
    level: { type: 'integer', 'x-mcp-header': 'Level' },
    plain: { type: 'string' },
    where: { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } },
  },
};
const headers = (h: Record<string, string>) => (name: string) => h[name];

t.test('declarations are found at any depth, header names lower-cased', async (t) => {
  t.same(
    paramHeaderDeclarations(schema).map((d) => [d.header, d.path.join('.')]),
    [
      ['mcp-param-region', 'region'],
      ['mcp-param-level', 'level'],
      ['mcp-param-zone', 'where.zone'],
    ],
  );
});

t.test('base64 sentinel values decode only when canonical', async (t) => {
  t.equal(decodeParamHeader('=?base64?SGVsbG8=?='), 'Hello');
  t.equal(decodeParamHeader('=?base64?SGVsbG8?='), undefined, 'missing padding');
  t.equal(decodeParamHeader('=?base64?SGVs!!!bG8=?='), undefined, 'characters outside the alphabet');
  t.equal(decodeParamHeader('=?base64?//8=?='), undefined, 'not UTF-8');
  t.equal(decodeParamHeader('SGVsbG8='), 'SGVsbG8=', 'no sentinel: literal');
  t.equal(decodeParamHeader('=?base64?SGVsbG8='), '=?base64?SGVsbG8=', 'no closing ?=: literal');
});

t.test('headers must agree with the arguments they mirror', async (t) => {
  t.equal(paramHeaderMismatch(schema, { region: 'Hello' }, headers({ 'mcp-param-region': 'Hello' })), undefined);
  t.equal(
    paramHeaderMismatch(schema, { region: 'Hello' }, headers({ 'mcp-param-region': '=?base64?SGVsbG8=?=' })),
    undefined,
  );
  t.match(paramHeaderMismatch(schema, { region: 'Hello' }, headers({})), /header is absent/);
  t.match(paramHeaderMismatch(schema, { region: 'Hello' }, headers({ 'mcp-param-region': 'Bye' })), /says "Bye"/);
  t.match(
    paramHeaderMismatch(schema, { region: 'Hello' }, headers({ 'mcp-param-region': '=?base64?SGVsbG8?=' })),
    /not valid base64/,
  );
  t.equal(
    paramHeaderMismatch(schema, { level: 42 }, headers({ 'mcp-param-level': '42.0' })),
    undefined,
    'numbers compare as numbers',
  );
  t.match(paramHeaderMismatch(schema, { level: 42 }, headers({ 'mcp-param-level': '0x2a' })), /says/);
  t.match(paramHeaderMismatch(schema, { where: { zone: 'eu' } }, headers({})), /mcp-param-zone header is absent/);
  t.equal(
    paramHeaderMismatch(schema, { plain: 'x', region: null }, headers({})),
    undefined,
    'undeclared and null arguments expect no header',
  );
  t.equal(
    paramHeaderMismatch({ type: 'object', properties: { a: { type: 'string' } } }, { a: 'x' }, headers({})),
    undefined,
    'a tool without declarations',
  );
});
