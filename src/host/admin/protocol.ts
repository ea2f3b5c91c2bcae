// The admin channel's wire contract, shared by the server and the CLI: its version, the hello answer,
// and where the socket lives for a given configuration.
import path from 'node:path';
import { embeddedDir } from '../db/location.js';
import { ADMIN_SOCKET_FILE } from '../db/owner-lock.js';
import { resolvePath } from '../settings/paths.js';
import type { HostSettings } from '../settings/schema.js';

/** Bumped when a route or a body changes shape; a CLI and a server that differ refuse each other by name. */
export const ADMIN_PROTOCOL = 4;

/**
 * `exocortex stdio` beside a running server: a GET of this path asking to upgrade to STDIO_UPGRADE turns
 * the admin connection into the client's stdio, relayed byte for byte (src/cli/stdio-relay.ts); the server
 * serves it (src/host/mcp/stdio-relayed.ts), or bridges it to its own MCP endpoint where another process owns
 * the vault (src/host/mcp/stdio-bridge.ts). The request carries the admin protocol and the vault asked for
 * (URI-encoded); a refusal is answered with the usual JSON error body.
 */
export const STDIO_RELAY_PATH = '/v1/stdio';
export const STDIO_UPGRADE = 'exocortex-stdio';
export const VAULT_PATH_HEADER = 'x-exocortex-vault-path';
export const PROTOCOL_HEADER = 'x-exocortex-admin-protocol';
export const PID_HEADER = 'x-exocortex-pid';

export interface Hello {
  readonly protocol: number;
  readonly version: string;
  readonly pid: number;
  readonly command: string;
  readonly startedAt: string;
  readonly vault: string;
  /** The vault.path vault's root on disk (the socket is the owner's own user's: nothing leaves the machine). */
  readonly vaultPath?: string;
}

/**
 * The socket's path: admin.socketPath when set, else inside the embedded database's directory (next to
 * its lock), else none (a server database without a socket path has no admin channel).
 */
export function adminSocketPath(settings: {
  readonly host: {
    readonly admin: Pick<HostSettings['admin'], 'socketPath'>;
    readonly database: Pick<HostSettings['database'], 'url'>;
  };
  readonly baseDir: string;
}): string | undefined {
  const configured = settings.host.admin.socketPath;
  if (configured) return resolvePath(settings, configured);
  const dir = embeddedDir(settings.host.database.url, settings.baseDir);
  return dir ? path.join(dir, ADMIN_SOCKET_FILE) : undefined;
}
