// `exocortex <family> <command> [args]`: runs an operator command a family declares, with the
// database migrated and the family's settings validated, without booting the family or serving.
import { ensureVault } from '../auth/vaults.js';
import { migrate, migrateHost, openDatabase } from '../db/index.js';
import { FamilyManager } from '../families/manager.js';
import { createLogger } from '../log/logger.js';
import { resolvePath, type Settings } from '../settings/load.js';
import { openVault } from '../vault/index.js';
import { PiscinaPool } from '../workers/pool.js';

export async function runFamilyCommand(settings: Settings, familyName: string, commandName: string | undefined, args: readonly string[]): Promise<number> {
  const log = createLogger(settings.host.log.level === 'info' ? 'warn' : settings.host.log.level);
  const h = settings.host;
  const vaultRoot = resolvePath(settings, h.vault.path);
  const fs = await openVault(vaultRoot, { allowNamedStaging: h.vault.allowNamedStaging });
  const database = await openDatabase(h.database.url, { baseDir: settings.baseDir, poolSize: 2, pgliteThread: h.database.pgliteThread });
  const workers = new PiscinaPool(h.workers);
  try {
    await migrateHost(database.db);
    const vaultId = await ensureVault(database.db, h.vault.name, vaultRoot);
    const vault = { id: vaultId, name: h.vault.name, obsidianName: h.vault.obsidianName, fs };
    const manager = new FamilyManager({ database, workers, log, server: { publicUrl: h.server.publicUrl, databaseEngine: database.engine.kind }, vault: () => vault, named: new Map() });
    const resolved = await manager.resolveFamily(settings, familyName);
    if (!resolved) {
      process.stderr.write(`exocortex: "${familyName}" is neither a command nor an installed family; see exocortex --help\n`);
      return 2;
    }
    const commands = resolved.family.commands ?? {};
    const command = commandName ? commands[commandName] : undefined;
    if (!command) {
      const list = Object.entries(commands).map(([n, c]) => `  exocortex ${familyName} ${n}  ${c.description}`);
      process.stderr.write(list.length ? `commands of the ${familyName} family:\n${list.join('\n')}\n` : `the ${familyName} family has no commands\n`);
      return commandName ? 2 : 0;
    }
    if (resolved.family.migrations) await migrate(database.db, `family_${familyName}`, resolved.family.migrations);
    await command.run({ db: database.db, log, settings: resolved.settings, vault, args, print: (line) => process.stderr.write(`${line}\n`) });
    return 0;
  } finally {
    await workers.close();
    await fs.close().catch(() => undefined);
    await database.close();
  }
}
