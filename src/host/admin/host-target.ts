// The host's side of the operator operations: the target every operation runs against in a running
// process (the admin channel, the panel and an in-process CLI pass share it), and the admin channel that
// serves them to CLI commands and stdio bridges of other processes.
import type { Host } from '../host.js';
import { notifyCredentialsChanged } from '../auth/api-keys.js';
import { requestBodyLimit } from '../http/listener.js';
import { openAdminChannel, type AdminChannel } from './channel-server.js';
import type { OperationTarget } from './operations.js';

/** Everything an operator command needs from this process; `forgetKeys` drops cached keys and re-reads limits. */
export function operationTarget(host: Host, forgetKeys: () => void): OperationTarget {
  return {
    db: host.database.db,
    vault: host.vaultHandle,
    vaults: host.vaults,
    settings: host.settings,
    log: host.log,
    manager: host.manager,
    index: host.index,
    forgetKeys,
    closeSessionsOf: async (credentialIds) => {
      // Other processes sharing a server database hold sessions and streams of these credentials too.
      if (host.leases) await notifyCredentialsChanged(host.database.db, [...credentialIds]);
      return host.hub.closeFor(credentialIds);
    },
    vaultsRemoved: () => host.pruneRemovedVaults(),
  };
}

/** Serve the operations, health and an MCP bridge on the admin socket. */
export function openHostAdmin(host: Host, socketPath: string, command: string): Promise<AdminChannel> {
  return openAdminChannel({
    socketPath,
    target: () => host.operations,
    hub: host.hub,
    deps: host.serverDeps,
    operator: host.operator,
    log: host.log,
    maxSessions: host.settings.host.server.maxSessions,
    command,
    health: () => host.health(),
    bodyLimitBytes: requestBodyLimit(host),
    forwarder: host.forwarder,
  });
}
