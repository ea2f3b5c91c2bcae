// The host's settings schema (zod): every key, its type and its default, one file per section under
// sections/, each marking whether a reload applies it ('live') or only a restart does ('restart').
// Family-owned sections are validated by the loader against each family's own JSON Schema; this file never
// names a family's keys.
import { z } from 'zod';
import { vaultSection } from './sections/vault.js';
import { serverSection } from './sections/server.js';
import { databaseSection } from './sections/database.js';
import { clusterSection } from './sections/cluster.js';
import { adminSection } from './sections/admin.js';
import { authSection } from './sections/auth.js';
import { metricsSection } from './sections/metrics.js';
import { panelSection } from './sections/panel.js';
import { oauthSection } from './sections/oauth.js';
import { admissionSection } from './sections/admission.js';
import { toolsSection } from './sections/tools.js';
import { auditSection } from './sections/audit.js';
import { workersSection } from './sections/workers.js';
import { indexSection } from './sections/index-pipeline.js';
import { logSection } from './sections/log.js';
import { reloadSection } from './sections/reload.js';
import { vaultsSection, usersSection } from './sections/accounts.js';
import { familiesSection, pluginsSection } from './sections/families.js';
import type { HostSection } from './sections/section.js';

export { ACCOUNT_NAME, userLimitsSchema, type UserLimitsOverride } from './sections/common.js';
export { declaredUserSchema, declaredVaultSchema } from './sections/accounts.js';
export { familyToggleSchema } from './sections/families.js';
export type { HostSection, ReloadMode } from './sections/section.js';

/** Every host section, in the order docs/configuration.md lists them. */
export const HOST_SECTIONS = {
  vault: vaultSection,
  server: serverSection,
  database: databaseSection,
  cluster: clusterSection,
  admin: adminSection,
  auth: authSection,
  metrics: metricsSection,
  panel: panelSection,
  oauth: oauthSection,
  admission: admissionSection,
  tools: toolsSection,
  audit: auditSection,
  workers: workersSection,
  index: indexSection,
  log: logSection,
  reload: reloadSection,
  vaults: vaultsSection,
  users: usersSection,
  families: familiesSection,
  plugins: pluginsSection,
} as const satisfies Record<string, HostSection>;

type Shape<T extends Record<string, HostSection>> = { [K in keyof T]: T[K]['schema'] };

function shapeOf<T extends Record<string, HostSection>>(sections: T): Shape<T> {
  return Object.fromEntries(Object.entries(sections).map(([k, s]) => [k, s.schema])) as Shape<T>;
}

export const hostSettingsSchema = z.object(shapeOf(HOST_SECTIONS)).strict();

export type HostSettings = z.infer<typeof hostSettingsSchema>;

/** Top-level keys the host owns; any other top-level key must be claimed by a family's settings. */
export const HOST_KEYS: ReadonlySet<string> = new Set(Object.keys(hostSettingsSchema.shape));

/**
 * What a reload from `before` to `after` changes that only a restart applies (the host warns of them): whole
 * restart sections by name, and a live section's restart keys as `section.key`.
 */
export function restartOnlyChanges(before: HostSettings, after: HostSettings): string[] {
  const changed = (a: unknown, b: unknown) => JSON.stringify(a) !== JSON.stringify(b);
  const out: string[] = [];
  for (const k of Object.keys(HOST_SECTIONS) as Array<keyof typeof HOST_SECTIONS>) {
    const s = HOST_SECTIONS[k];
    if (s.reload === 'restart') {
      if (changed(before[k], after[k])) out.push(k);
      continue;
    }
    const b = before[k] as Record<string, unknown>;
    const a = after[k] as Record<string, unknown>;
    for (const key of s.restartKeys) if (changed(b?.[key], a?.[key])) out.push(`${k}.${key}`);
  }
  return out;
}
