// exocortex oauth clients | grants list | revoke: the embedded authorization server's clients and grants.
import type { ClientView, GrantView } from '../host/admin/oauth-operations.js';
import type { Settings } from '../host/settings/load.js';
import { loadOAuth, reachOwner, withAccounts } from './owner.js';

export async function oauthClientsList(settings: Settings): Promise<void> {
  const { oauthClientsListOp } = await loadOAuth();
  const clients = await reachOwner(
    settings,
    (owner) => owner.get<{ clients: ClientView[] }>('/v1/oauth/clients').then((r) => r.clients),
    () => withAccounts(settings, (t) => oauthClientsListOp(t)),
  );
  const lines = clients.map((c) =>
    [c.clientId, c.name, c.registration, String(c.grants), c.redirectUris.join(' ') || '-', c.createdAt ?? '-'].join(
      '\t',
    ),
  );
  process.stdout.write(['client id\tname\tregistered by\tgrants\tredirect uris\tcreated', ...lines].join('\n') + '\n');
}

export async function oauthClientsRevoke(settings: Settings, id: string): Promise<void> {
  const { oauthClientsRevokeOp } = await loadOAuth();
  const r = await reachOwner(
    settings,
    (owner) => owner.post<{ revoked: string; grants: number }>('/v1/oauth/clients/revoke', { id }),
    () => withAccounts(settings, (t) => oauthClientsRevokeOp(t, id)),
  );
  process.stderr.write(
    `removed client ${r.revoked} and its ${r.grants} grant${r.grants === 1 ? '' : 's'}: their tokens are refused from now on\n`,
  );
}

export async function oauthGrantsList(settings: Settings): Promise<void> {
  const { oauthGrantsListOp } = await loadOAuth();
  const grants = await reachOwner(
    settings,
    (owner) => owner.get<{ grants: GrantView[] }>('/v1/oauth/grants').then((r) => r.grants),
    () => withAccounts(settings, (t) => oauthGrantsListOp(t)),
  );
  const lines = grants.map((g) =>
    [g.id, g.user, g.clientId, g.scopes || '-', g.createdAt, g.expiresAt ?? '-'].join('\t'),
  );
  process.stdout.write(['grant id\tuser\tclient id\tscopes\tcreated\texpires', ...lines].join('\n') + '\n');
}

export async function oauthGrantsRevoke(settings: Settings, id: string): Promise<void> {
  const { oauthGrantsRevokeOp } = await loadOAuth();
  const r = await reachOwner(
    settings,
    (owner) => owner.post<{ revoked: string; rows: number }>('/v1/oauth/grants/revoke', { id }),
    () => withAccounts(settings, (t) => oauthGrantsRevokeOp(t, id)),
  );
  process.stderr.write(`revoked grant ${r.revoked}: its access and refresh tokens are refused from now on\n`);
}
