// The host's own schema, in order. Families ship their own migrations; this list never names one.
import type { FamilyMigration } from '../src/sdk/types.js';
import m0001 from './0001-host-core.js';
import m0002 from './0002-index.js';
import m0003 from './0003-index-deferred.js';
import m0004 from './0004-users.js';
import m0005 from './0005-scopes-and-limits.js';
import m0006 from './0006-oauth.js';
import m0007 from './0007-panel-sessions.js';
import m0008 from './0008-usage-rollups.js';
import m0009 from './0009-notes-name-index.js';
import m0010 from './0010-attempt-budgets.js';
import m0011 from './0011-cluster.js';
import m0012 from './0012-usage-logs-brin.js';

export const hostMigrations: Readonly<Record<string, FamilyMigration>> = {
  '0001-host-core': m0001,
  '0002-index': m0002,
  '0003-index-deferred': m0003,
  '0004-users': m0004,
  '0005-scopes-and-limits': m0005,
  '0006-oauth': m0006,
  '0007-panel-sessions': m0007,
  '0008-usage-rollups': m0008,
  '0009-notes-name-index': m0009,
  '0010-attempt-budgets': m0010,
  '0011-cluster': m0011,
  '0012-usage-logs-brin': m0012,
};
