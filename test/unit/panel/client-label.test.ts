// The panel names an OAuth client by its registered name, redirect host and registration date (issue 43):
// three clients all registered as "Claude" are told apart, and a grant whose client is gone shows its id.
import t from 'tap';
import { clientLabel, redirectHosts } from '../../../src/panel/client-label.js';
import type { ClientView } from '../../../src/host/admin/oauth-operations.js';

const claude = (id: string, uri: string, createdAt: string): ClientView => ({
  clientId: id,
  name: 'Claude',
  registration: 'dcr',
  redirectUris: [uri],
  grants: 1,
  createdAt,
});

t.test('three clients named Claude get three labels', async (t) => {
  const labels = [
    clientLabel(claude('a', 'https://claude.ai/api/mcp/auth_callback', '2026-12-01T10:00:00Z'), 'a'),
    clientLabel(claude('b', 'http://127.0.0.1:6274/oauth/callback', '2026-12-01T11:00:00Z'), 'b'),
    clientLabel(claude('c', 'https://claude.ai/api/mcp/auth_callback', '2026-12-03T09:00:00Z'), 'c'),
  ];
  t.same(labels, [
    'Claude — claude.ai, registered 2026-12-01',
    'Claude — 127.0.0.1:6274, registered 2026-12-01',
    'Claude — claude.ai, registered 2026-12-03',
  ]);
  t.equal(new Set(labels).size, 3);
});

t.test('a metadata-document client is named with its document host; a gone client by its id', async (t) => {
  t.equal(
    clientLabel(
      {
        clientId: 'https://clients.example.com/client.json',
        name: 'Doc Client',
        registration: 'metadata-document',
        redirectUris: [],
        grants: 1,
        createdAt: null,
      },
      'x',
    ),
    'Doc Client — clients.example.com',
  );
  t.equal(clientLabel(undefined, 'gone-id'), 'gone-id');
  t.same(redirectHosts({ redirectUris: ['https://a.example/cb', 'https://a.example/other', 'not a url'] }), [
    'a.example',
    'not a url',
  ]);
});
