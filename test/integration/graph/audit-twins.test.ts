// audit_notes reports notes whose paths differ only in Unicode normalisation (made outside the server,
// since create and move refuse to make them): one file to Obsidian on macOS, two on Linux.
import t from 'tap';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import { textOf } from '../../../src/host/testing/testkit.js';

const nfc = 'Caf\u00e9.md';
const nfd = 'Cafe\u0301.md';
const server = await startTestServer({
  files: { [nfc]: '# Café\n', [nfd]: '# Café again\n', 'Plain.md': '# Plain\n' },
});
t.teardown(() => server.close());
await (server.host.services.named.get('index') as IndexService).whenReady(server.host.vaultHandle.id);
const client = await server.connect();

t.test('normalization_twins lists the pair, each path with its form', async (t) => {
  const r = await client.callTool({ name: 'audit_notes', arguments: { classes: ['normalization_twins'] } });
  t.notOk(r.isError, textOf(r));
  const section = (
    r.structuredContent as {
      sections: Array<{ class: string; total: number; items: Array<{ key: string; paths: string[] }> }>;
    }
  ).sections[0];
  t.equal(section.class, 'normalization_twins');
  t.equal(section.total, 1);
  t.same(section.items[0].paths.slice().sort(), [nfc, nfd].sort());
  t.match(textOf(r), /\(NFC\).*\(NFD\)|\(NFD\).*\(NFC\)/);
});
