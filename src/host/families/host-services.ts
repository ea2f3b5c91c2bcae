// The services the host offers every family (by name in `requires`) and the shape the loader,
// the dispatcher and the transports share. Declarations only.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseService } from '../db/index.js';
import type { HostInfo, Logger, VaultHandle, WorkerPool } from '../../sdk/types.js';

export interface HostServices {
  readonly database: DatabaseService;
  readonly workers: WorkerPool;
  readonly log: Logger;
  readonly server: HostInfo;
  /** The vault a principal is confined to (single-vault mode: the configured one). */
  vault(id?: number): VaultHandle;
  /** The ids of the vaults this process serves now (owned here, root reachable). */
  servingVaults(): readonly number[];
  /** Named host services families may require ('vaults', 'workers', 'db', and later 'index'). */
  readonly named: Map<string, unknown>;
  /** A vault-bound HTTP request served where the vault is owned (cluster/forward.ts); true: answered. */
  routeByVault?(
    vaultId: number,
    request: FastifyRequest,
    reply: FastifyReply,
    write: boolean,
    family: string,
  ): Promise<boolean>;
  /** The client's address (a verified hop's, else the socket peer's). */
  clientAddress?(request: FastifyRequest): string;
}
