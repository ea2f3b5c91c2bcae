// exocortex keys create | list | revoke: API keys, through the running server or on the database here.
import type { KeyRow } from '../host/admin/operations.js';
import type { Settings } from '../host/settings/load.js';
import type { Scope } from '../sdk/scopes.js';
import { loadOps, reachOwner, withKeys } from './owner.js';

export async function keysCreate(
  settings: Settings,
  opts: { name: string; scope: Scope; expires?: string; user?: string },
): Promise<void> {
  const { keysCreateOp } = await loadOps();
  const input = {
    name: opts.name,
    scope: opts.scope,
    expires: opts.expires,
    ...(opts.user ? { user: opts.user } : {}),
  };
  const { raw, key } = await reachOwner(
    settings,
    (owner) => owner.post<{ raw: string; key: KeyRow }>('/v1/keys', input),
    () => withKeys(settings, (t) => keysCreateOp(t, input)),
  );
  process.stdout.write(`${raw}\n`);
  process.stderr.write(
    `created key ${key.name} for user ${key.user ?? '-'} (${key.scope}${key.expiresAt ? `, expires ${key.expiresAt}` : ''}), id ${key.id}\n`,
  );
}

export async function keysList(settings: Settings): Promise<void> {
  const { keysListOp } = await loadOps();
  const keys = await reachOwner(
    settings,
    (owner) => owner.get<{ keys: KeyRow[] }>('/v1/keys').then((r) => r.keys),
    () => withKeys(settings, (t) => keysListOp(t)),
  );
  // The user goes last, so scripts reading the earlier columns keep working.
  const lines = keys.map((k) =>
    [k.id, k.name, k.prefix + '…', k.scope, k.state, k.expiresAt ?? '-', k.lastUsedAt ?? 'never', k.user ?? '-'].join(
      '\t',
    ),
  );
  process.stdout.write(['id\tname\tprefix\tscope\tstate\texpires\tlast used\tuser', ...lines].join('\n') + '\n');
}

export async function keysRevoke(settings: Settings, which: string): Promise<void> {
  const { keysRevokeOp } = await loadOps();
  const { revoked } = await reachOwner(
    settings,
    (owner) => owner.post<{ revoked: number }>('/v1/keys/revoke', { which }),
    () => withKeys(settings, (t) => keysRevokeOp(t, which)),
  );
  process.stderr.write(`revoked ${revoked} key${revoked > 1 ? 's' : ''}\n`);
}
