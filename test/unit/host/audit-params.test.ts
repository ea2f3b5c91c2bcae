// The audit row's params: the call's arguments as JSON, cut to audit.paramsMaxChars with an ellipsis,
// never between the two halves of a surrogate pair (half a pair reached the database as U+FFFD).
import t from 'tap';
import { AuditWriter } from '../../../src/host/audit/batch-writer.js';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const writer = (paramsMaxChars: number) =>
  new AuditWriter(
    undefined as never, // truncateParams never reaches the database
    { enabled: true, paramsMaxChars, batchSize: 200, flushIntervalMs: 1_000, maxQueue: 10_000 },
    { debug() {}, info() {}, warn() {}, error() {} } as never,
  );

t.test('audit-params: short arguments are kept whole; long ones are cut with an ellipsis', async (t) => {
  t.equal(writer(100).truncateParams({ text: 'hi' }), '{"text":"hi"}');
  t.equal(writer(8).truncateParams({ text: 'hello world' }), '{"text"…');
  t.equal(writer(1).truncateParams({ text: 'x' }), '…');
});

t.test('audit-params: a cut never leaves half a surrogate pair', async (t) => {
  const args = { text: '😀'.repeat(20) };
  for (let max = 2; max < 30; max++) {
    const cut = writer(max).truncateParams(args);
    t.notOk(LONE_SURROGATE.test(cut), `max ${max}: ${JSON.stringify(cut)} holds no lone surrogate`);
    t.ok(cut.length <= max, `max ${max}: ${cut.length} characters`);
    t.ok(cut.endsWith('…'));
  }
});
