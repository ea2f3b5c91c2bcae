// One refusal, every surface: the presenter words the same Refusal as a tool result (with the unchanged
// one-line MCP-REFUSAL contract), a JSON-RPC error, an HTTP 401/403 body and panel text, and every one of
// them carries the same payload.
import t from 'tap';
import { Refusal, parseRefusalLine, renderRefusal } from '../../../src/sdk/refusals.js';
import {
  refusalHttpResponse,
  refusalJsonRpcError,
  refusalOfToolResult,
  refusalPanelText,
  refusalPayload,
  refusalToolResult,
} from '../../../src/host/refusal-presenter.js';

const notFound = new Refusal('not_found', { path: 'A/B.md' });

t.test('tool result: the sentence, then the contract line, and the structured refusal off the wire', async (t) => {
  const result = refusalToolResult(notFound);
  t.equal(result.isError, true);
  t.equal(result.content.length, 1);
  const text = (result.content[0] as { text: string }).text;
  t.equal(text, renderRefusal(notFound), 'the same text the SDK renders');
  t.match(text.split('\n').pop(), /^MCP-REFUSAL \{"code":"not_found","retryable":false,"path":"A\/B.md"\}$/);
  t.same(parseRefusalLine(text), refusalPayload(notFound), 'the line carries the payload');
  t.equal(refusalOfToolResult(result), notFound, 'an in-process caller reads the refusal itself');
  t.notMatch(JSON.stringify(result), /exocortex\.refusal/, 'the refusal itself never goes on the wire');
  t.same(Object.keys(JSON.parse(JSON.stringify(result))).sort(), ['content', 'isError']);
  t.equal(refusalOfToolResult({ content: [{ type: 'text', text }], isError: true }), undefined, 'text is not parsed');
});

t.test(
  'JSON-RPC error: what is missing or malformed is invalid params, credentials -32001, the rest internal',
  async (t) => {
    t.same(refusalJsonRpcError(notFound, { uri: 'note:///A/B.md' }), {
      code: -32602,
      message: notFound.message,
      data: { refusal: refusalPayload(notFound), uri: 'note:///A/B.md' },
    });
    t.equal(refusalJsonRpcError(new Refusal('unknown_resource', { uri: 'x://y' })).data.uri, 'x://y');
    t.equal(refusalJsonRpcError(new Refusal('unknown_prompt', { prompt: 'p' })).code, -32602);
    t.equal(refusalJsonRpcError(new Refusal('unauthenticated', {})).code, -32001);
    t.equal(refusalJsonRpcError(new Refusal('timeout', { timeoutMs: 5 })).code, -32603);
  },
);

t.test('HTTP: 401 and 403 bodies have one shape, with the full payload', async (t) => {
  const unauthenticated = refusalHttpResponse(new Refusal('unauthenticated', {}, 'This credential has expired.'));
  const scope = refusalHttpResponse(
    new Refusal('insufficient_scope', { scope: 'notes:write', reason: 'it writes' }),
    7,
  );
  t.equal(unauthenticated.status, 401);
  t.equal(scope.status, 403);
  t.same(Object.keys(unauthenticated.body.error.data.refusal).slice(0, 2), ['code', 'retryable']);
  t.match(scope.body, {
    jsonrpc: '2.0',
    id: 7,
    error: {
      code: -32001,
      data: { refusal: { code: 'insufficient_scope', scope: 'notes:write', reason: 'it writes' } },
    },
  });
  t.same(Object.keys(unauthenticated.body).sort(), Object.keys(scope.body).sort());
  t.same(Object.keys(unauthenticated.body.error).sort(), Object.keys(scope.body.error).sort());
});

t.test('panel text: the sentence alone, 404 for what does not exist', async (t) => {
  t.same(refusalPanelText(notFound), { status: 404, text: notFound.message });
  t.equal(refusalPanelText(new Refusal('unknown_tool', { tool: 'x' })).status, 404);
  const other = refusalPanelText(new Refusal('invalid_arguments', { reason: 'bad\nline' }));
  t.equal(other.status, 400);
  t.notMatch(other.text, /\n|MCP-REFUSAL/);
});
