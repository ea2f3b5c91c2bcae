// exocortex doctor: checks Node, configuration, vault platform guarantees, database and families,
// printing one line per check with the fix for anything wrong. Returns the exit code.
import { accessSync, constants, existsSync } from 'node:fs';
import { AdminClient } from '../host/admin/channel-client.js';
import { adminSocketPath } from '../host/admin/protocol.js';
import { Host } from '../host/host.js';
import { createLogger } from '../host/log/logger.js';
import { loadSettings, resolvePath, SettingsError, type Settings } from '../host/settings/load.js';
import * as vaultModule from '../host/vault/index.js';

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

export async function runDoctor(configFile?: string): Promise<number> {
  const checks: Check[] = [];
  const major = Number(process.versions.node.split('.')[0]);
  checks.push({
    name: 'node',
    ok: major >= 20,
    detail: `Node ${process.versions.node}`,
    fix: 'install Node 20 or newer',
  });
  let settings: Settings | undefined;
  try {
    settings = loadSettings({ file: configFile });
    checks.push({ name: 'config', ok: true, detail: `${settings.file}: host settings are valid` });
  } catch (e) {
    checks.push({
      name: 'config',
      ok: false,
      detail: e instanceof SettingsError ? e.problems.join('; ') : String(e),
      fix: 'correct the keys named above',
    });
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
    checks.push({
      name: 'vault path',
      ok: writable,
      detail: exists ? `${root} exists` : `${root} will be created`,
      fix: 'make vault.path a writable folder',
    });
    const platform = (vaultModule as { checkPlatform?: (root: string) => Promise<{ checks: Check[] }> }).checkPlatform;
    if (platform && exists) {
      for (const c of (await platform(root)).checks) checks.push({ ...c, name: `platform: ${c.name}` });
    }
    await databaseChecks(settings, checks);
  }
  for (const c of checks)
    process.stdout.write(
      `${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}${!c.ok && c.fix ? `\n     fix: ${c.fix}` : ''}\n`,
    );
  const failed = checks.filter((c) => !c.ok).length;
  process.stdout.write(failed ? `${failed} check(s) failed\n` : 'all checks passed\n');
  return failed ? 1 : 0;
}

/**
 * Database and families: asked of the running server when one owns the database (never opened beside
 * it), else checked by starting the host here. Family sections are validated there, so an unknown
 * family key fails the config check rather than passing it first.
 */
async function databaseChecks(settings: Settings, checks: Check[]): Promise<void> {
  const socket = adminSocketPath(settings);
  let owner: AdminClient | undefined;
  try {
    owner = socket ? await AdminClient.connect(socket) : undefined;
  } catch (e) {
    checks.push({
      name: 'admin socket',
      ok: false,
      detail: (e as Error).message,
      fix: 'stop the server, remove the socket file, and start it again',
    });
    return;
  }
  if (owner) {
    try {
      const health = await owner.get<{
        engine?: string;
        families?: Record<string, string>;
        familyReasons?: Record<string, string>;
        reload?: { ok: boolean; errors: string[] } | null;
      }>('/v1/health');
      checks.push({
        name: 'database',
        ok: true,
        detail: `${health.engine ?? 'database'} owned by the running server (PID ${owner.hello.pid}, ${owner.hello.command}), reached through ${owner.socketPath}`,
      });
      if (health.reload && !health.reload.ok)
        checks.push({
          name: 'config reload',
          ok: false,
          detail: health.reload.errors.join('; '),
          fix: 'correct the config file; the server keeps its previous configuration meanwhile',
        });
      for (const [name, state] of Object.entries(health.families ?? {})) {
        const ok = state === 'serving' || state === 'disabled';
        const reason = health.familyReasons?.[name];
        checks.push({
          name: `family ${name}`,
          ok,
          detail: `${state}${reason ? `: ${reason}` : ''}`,
          fix: ok ? undefined : 'see the reason; enable what it requires or disable the family',
        });
      }
    } finally {
      await owner.close();
    }
    return;
  }
  try {
    const host = await Host.start({ settings, http: false, admin: false, log: createLogger('silent') });
    checks.push({ name: 'database', ok: true, detail: `${host.database.engine.description}, migrations applied` });
    for (const [name, st] of host.manager.registry.status) {
      const ok = st.state === 'serving' || st.state === 'disabled';
      checks.push({
        name: `family ${name}`,
        ok,
        detail: `${st.state}${st.readOnly ? ' (read-only)' : ''}${st.reason ? `: ${st.reason}` : ''}`,
        fix: ok ? undefined : 'see the reason; enable what it requires or disable the family',
      });
    }
    await host.close();
    const config = checks.find((c) => c.name === 'config');
    if (config) config.detail = `${settings.file} is valid`;
  } catch (e) {
    if (e instanceof SettingsError) {
      const config = checks.find((c) => c.name === 'config');
      if (config)
        Object.assign(config, { ok: false, detail: e.problems.join('; '), fix: 'correct the keys named above' });
      return;
    }
    const locked = (e as { code?: string }).code === 'database_locked';
    checks.push({
      name: 'database',
      ok: false,
      detail: (e as Error).message,
      fix: locked ? 'wait for the owner to finish, or stop it' : 'fix the problem named above',
    });
  }
}
