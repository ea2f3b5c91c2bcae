// The requestState seal: what a family minted comes back unchanged; forged, tampered, expired state
// and state minted for another credential or method is refused.
import t from 'tap';
import type { ServerContext } from '@modelcontextprotocol/server';
import { RequestStateSeal } from '../../../../src/host/mcp/request-state.js';

const ctx = (method: string) => ({ mcpReq: { method } }) as unknown as ServerContext;

t.test('a sealed state opens to what was sealed', async (t) => {
  const seal = new RequestStateSeal();
  const wire = await seal.seal('round:1', 'key-a', 'tools/call');
  t.not(wire, 'round:1', 'the client never sees the family state bare');
  t.equal(await seal.open(wire, 'key-a', ctx('tools/call')), 'round:1');
});

t.test('anything else is refused', async (t) => {
  const seal = new RequestStateSeal();
  const wire = await seal.seal('round:1', 'key-a', 'tools/call');
  await t.rejects(seal.open(`${wire}-TAMPERED`, 'key-a', ctx('tools/call')), 'tampered');
  await t.rejects(seal.open('round:1', 'key-a', ctx('tools/call')), 'made up by the client');
  await t.rejects(seal.open(wire, 'key-b', ctx('tools/call')), 'another credential');
  await t.rejects(seal.open(wire, 'key-a', ctx('prompts/get')), 'another method');
  await t.rejects(new RequestStateSeal().open(wire, 'key-a', ctx('tools/call')), 'another process key');
  const shortLived = new RequestStateSeal(undefined, -1);
  await t.rejects(
    shortLived.open(await shortLived.seal('x', 'key-a', 'tools/call'), 'key-a', ctx('tools/call')),
    'expired',
  );
});
