// `exocortex <family> <command> [args]`: runs an operator command a family declares. With a server
// running it runs there (over the admin channel); otherwise here, with the database migrated and the
// family's settings validated, without booting the family or serving.
import type { AdminClient } from '../host/admin/channel-client.js';
import { familyCommandOp } from '../host/admin/operations.js';
import { ensureVault } from '../host/auth/vaults.js';
import { hostEngineOptions, migrateHost, openDatabase } from '../host/db/index.js';
import { FamilyManager } from '../host/families/manager.js';
import { createLogger } from '../host/log/logger.js';
import { resolvePath, type Settings } from '../host/settings/load.js';
import { openVault } from '../host/vault/index.js';
import { PiscinaPool } from '../host/workers/pool.js';
import { reachOwner } from './owner.js';

export async function runFamilyCommand(
  settings: Settings,
  familyName: string,
  commandName: string | undefined,
  args: readonly string[],
): Promise<number> {
  const print = (line: string) => process.stderr.write(`${line}\n`);
  const remote = async (owner: AdminClient) =>
    (
      await owner.stream<{ exitCode: number }>(
        '/v1/family',
        { family: familyName, command: commandName, args },
        (e) => typeof e.line === 'string' && print(e.line),
      )
    ).exitCode;
  return reachOwner(settings, remote, () => runHere(settings, familyName, commandName, args, print));
}

async function runHere(
  settings: Settings,
  familyName: string,
  commandName: string | undefined,
  args: readonly string[],
  print: (line: string) => void,
): Promise<number> {
  const log = createLogger(settings.host.log.level === 'info' ? 'warn' : settings.host.log.level);
  const h = settings.host;
  const vaultRoot = resolvePath(settings, h.vault.path);
  const database = await openDatabase(h.database.url, { ...hostEngineOptions(settings), poolSize: 2 });
  const fs = await openVault(vaultRoot, { allowNamedStaging: h.vault.allowNamedStaging }).catch(async (e) => {
    await database.close();
    throw e;
  });
  const workers = new PiscinaPool(h.workers);
  try {
    await migrateHost(database.db);
    const vaultId = await ensureVault(database.db, h.vault.name, vaultRoot);
    const vault = { id: vaultId, name: h.vault.name, obsidianName: h.vault.obsidianName, fs };
    const manager = new FamilyManager({
      database,
      workers,
      log,
      server: { publicUrl: h.server.publicUrl, databaseEngine: database.engine.kind },
      vault: () => vault,
      // A command runs beside the server that serves the vault: no background work of a service is its own.
      servingVaults: () => [],
      named: new Map(),
    });
    return await familyCommandOp(
      { db: database.db, vault, settings, log, manager, index: undefined, forgetKeys: () => undefined },
      familyName,
      commandName,
      args,
      print,
    );
  } finally {
    await workers.close();
    await fs.close().catch(() => undefined);
    await database.close();
  }
}
