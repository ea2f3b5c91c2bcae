// exocortex doctor: checks Node, configuration, vault platform guarantees, database and families,
// printing one line per check with the fix for anything wrong. Returns the exit code.
import { accessSync, constants, existsSync } from 'node:fs';
import { Host } from '../host.js';
import { createLogger } from '../log/logger.js';
import { loadSettings, resolvePath, SettingsError, type Settings } from '../settings/load.js';
import * as vaultModule from '../vault/index.js';

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

export async function runDoctor(configFile?: string): Promise<number> {
  const checks: Check[] = [];
  const major = Number(process.versions.node.split('.')[0]);
  checks.push({ name: 'node', ok: major >= 20, detail: `Node ${process.versions.node}`, fix: 'install Node 20 or newer' });
  let settings: Settings | undefined;
  try {
    settings = loadSettings({ file: configFile });
    checks.push({ name: 'config', ok: true, detail: `${settings.file} is valid` });
  } catch (e) {
    checks.push({ name: 'config', ok: false, detail: e instanceof SettingsError ? e.problems.join('; ') : String(e), fix: 'correct the keys named above' });
  }
  if (settings) {
    const root = resolvePath(settings, settings.host.vault.path);
    const exists = existsSync(root);
    let writable = false;
    try {
      accessSync(exists ? root : settings.baseDir, constants.W_OK);
      writable = true;
    } catch {
      writable = false;
    }
    checks.push({ name: 'vault path', ok: writable, detail: exists ? `${root} exists` : `${root} will be created`, fix: 'make vault.path a writable folder' });
    const platform = (vaultModule as { checkPlatform?: (root: string) => Promise<{ checks: Check[] }> }).checkPlatform;
    if (platform && exists) {
      for (const c of (await platform(root)).checks) checks.push({ ...c, name: `platform: ${c.name}` });
    }
    try {
      const host = await Host.start({ settings, http: false, log: createLogger('silent') });
      checks.push({ name: 'database', ok: true, detail: `${host.database.engine.description}, migrations applied` });
      for (const [name, st] of host.manager.registry.status) {
        const ok = st.state === 'serving' || st.state === 'disabled';
        checks.push({ name: `family ${name}`, ok, detail: `${st.state}${st.readOnly ? ' (read-only)' : ''}${st.reason ? `: ${st.reason}` : ''}`, fix: ok ? undefined : 'see the reason; enable what it requires or disable the family' });
      }
      await host.close();
    } catch (e) {
      checks.push({ name: 'startup', ok: false, detail: e instanceof SettingsError ? e.problems.join('; ') : (e as Error).message, fix: 'fix the problem named above' });
    }
  }
  for (const c of checks) process.stdout.write(`${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}${!c.ok && c.fix ? `\n     fix: ${c.fix}` : ''}\n`);
  const failed = checks.filter((c) => !c.ok).length;
  process.stdout.write(failed ? `${failed} check(s) failed\n` : 'all checks passed\n');
  return failed ? 1 : 0;
}
