// Hot reload: the config file is watched (and SIGHUP asks too); a reload re-reads it and applies, one at a
// time, what it changed of the vaults and users (in the database) and of the families. A file that does
// not load, or that contradicts the database, is refused and the previous configuration keeps serving;
// keys the sections mark restart-only are logged as waiting for a restart.
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { Logger } from '../sdk/types.js';
import type { ApplyResult, FamilyManager } from './families/manager.js';
import { loadSettings, resolvePath, SettingsError, type Settings } from './settings/load.js';
import { restartOnlyChanges } from './settings/schema.js';
import { applyDeclared, DeclaredConflict, type DeclaredChanges } from './vaults/declared.js';
import type { VaultRegistry } from './vaults/registry.js';

/** What a reload reads and changes of the host. */
export interface ReloadTarget {
  settings(): Settings;
  /** The new settings, once the families applied them. */
  adopt(next: Settings): void;
  closed(): boolean;
  readonly log: Logger;
  readonly db: Kysely<any>;
  /** The id of the vault.path vault. */
  readonly defaultVaultId: number;
  readonly manager: FamilyManager;
  readonly vaults: VaultRegistry;
  /** Users or keys changed: drop cached keys, re-read limits. */
  credentialsChanged(): void;
  pruneRemovedVaults(): Promise<void>;
}

export class ConfigReloader {
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly onSighup = () => void this.reload();
  /** Reloads run one at a time (a SIGHUP and a file change may come together). */
  private reloading: Promise<unknown> = Promise.resolve();

  constructor(private readonly host: ReloadTarget) {}

  /** Reload on SIGHUP, and on a change of the config file when reload.watchConfig. */
  watch(): void {
    process.on('SIGHUP', this.onSighup);
    const settings = this.host.settings();
    const file = settings.file;
    if (!file || !settings.host.reload.watchConfig) return;
    const dir = path.dirname(file);
    const base = path.basename(file);
    try {
      this.watcher = watch(dir, (_event, name) => {
        if (name !== base) return;
        clearTimeout(this.timer);
        this.timer = setTimeout(() => void this.reload(), 150);
      });
      this.watcher.unref();
    } catch (e) {
      this.host.log.warn({ err: String(e) }, 'config file cannot be watched; use SIGHUP to reload');
    }
  }

  /** Re-read the config file and apply vault, user and family changes. A bad file keeps the current ones. */
  reload(): Promise<ApplyResult> {
    const next = this.reloading.then(() => this.reloadNow());
    this.reloading = next.catch(() => undefined);
    return next;
  }

  close(): void {
    process.off('SIGHUP', this.onSighup);
    clearTimeout(this.timer);
    this.watcher?.close();
  }

  private async reloadNow(): Promise<ApplyResult> {
    const host = this.host;
    if (host.closed()) return { ok: false, errors: ['host is closed'], booted: [], closed: [] };
    const current = host.settings();
    let next: Settings;
    try {
      next = loadSettings({ file: current.file, cwd: current.baseDir });
    } catch (e) {
      const errors = e instanceof SettingsError ? [...e.problems] : [String(e)];
      host.log.error({ errors }, 'config reload refused; the previous configuration keeps serving');
      const result = { ok: false, errors, booted: [], closed: [] };
      host.manager.lastResult = { ...result, at: new Date().toISOString() };
      return result;
    }
    const restartOnly = restartOnlyChanges(current.host, next.host);
    if (restartOnly.length) host.log.warn({ keys: restartOnly }, 'these settings change only on restart');
    try {
      await this.applyVaultChanges(
        await applyDeclared(host.db, next.host, (p) => resolvePath(next, p), {
          name: current.host.vault.name,
          id: host.defaultVaultId,
        }),
      );
    } catch (e) {
      if (!(e instanceof DeclaredConflict)) throw e;
      host.log.error(
        { errors: e.problems },
        'config reload refused: its vaults or users contradict the database; the previous configuration keeps serving',
      );
      const result = { ok: false, errors: [...e.problems], booted: [], closed: [] };
      host.manager.lastResult = { ...result, at: new Date().toISOString() };
      return result;
    }
    const result = await host.manager.apply(next);
    if (result.ok) host.adopt(next);
    return result;
  }

  /** Start and stop pipelines for what the config file's vaults and users changed. */
  private async applyVaultChanges(changes: DeclaredChanges): Promise<void> {
    const host = this.host;
    for (const id of [...changes.removed, ...changes.restart]) await host.vaults.stop(id);
    for (const row of changes.serve) await host.vaults.serve(row);
    if (changes.usersChanged || changes.removed.length) host.credentialsChanged();
    if (changes.removed.length) await host.pruneRemovedVaults();
  }
}
