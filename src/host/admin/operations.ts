// Operator commands as functions over whatever owns the database: the running server (through the admin
// channel) or the CLI process itself when no server runs. Both paths call these, so they cannot drift.
// Nothing here writes to the terminal; callers render the results.
import type { Kysely } from 'kysely';
import type { Logger, VaultHandle } from '../../sdk/types.js';
import { parseScopes, type Scope } from '../../sdk/scopes.js';
import { createApiKey, listApiKeys, parseExpiry, revokeApiKey, type ApiKeyRecord } from '../auth/api-keys.js';
import { migrate } from '../db/index.js';
import type { FamilyManager } from '../families/manager.js';
import type { IndexPipeline } from '../index/index.js';
import type { Settings } from '../settings/load.js';
import { OPERATOR_USER, userByName } from '../auth/users.js';
import type { VaultRegistry } from '../vaults/registry.js';
import { refused } from './account-operations.js';
import { OperationError } from './errors.js';

/** What an operation needs from its owner. `forgetKeys` drops every cached verification at once. */
export interface OperationTarget {
  readonly db: Kysely<any>;
  readonly vault: VaultHandle;
  readonly settings: Settings;
  readonly log: Logger;
  readonly manager: FamilyManager;
  readonly index: IndexPipeline | undefined;
  /** Every served vault (absent where no server runs). */
  readonly vaults?: VaultRegistry;
  forgetKeys(): void;
  /** Close the open MCP sessions of these credentials (absent where no server runs). */
  closeSessionsOf?(credentialIds: ReadonlySet<string>): Promise<number>;
  /** Let the serving families drop their rows of vaults that are gone (absent where no server runs). */
  vaultsRemoved?(): Promise<void>;
}

export { OperationError };

/** The part of a target the key commands use (the CLI builds it from a bare database). */
export type KeyTarget = Pick<OperationTarget, 'db' | 'forgetKeys' | 'closeSessionsOf'> & {
  readonly vault: { readonly id: number };
};

export interface KeyRow {
  readonly id: string;
  readonly name: string;
  readonly prefix: string;
  readonly scope: Scope;
  readonly user: string | null;
  readonly state: 'active' | 'revoked' | 'expired';
  readonly expiresAt: string | null;
  readonly lastUsedAt: string | null;
}

/** Mint a key for a user (the implicit operator when none is named); it serves that user's vault. */
export async function keysCreateOp(
  t: KeyTarget,
  input: { name: string; scope: Scope; expires?: string; user?: string },
): Promise<{ raw: string; key: KeyRow }> {
  if (!input.name || input.name.length > 80 || /[\p{Cc}]/u.test(input.name))
    throw new OperationError('invalid_arguments', 'a key name is 1 to 80 characters without control characters');
  let scope: string;
  try {
    scope = parseScopes(String(input.scope ?? '')).join(' ');
  } catch (e) {
    throw new OperationError('invalid_arguments', `scope: ${(e as Error).message}`);
  }
  let expiresAt: Date | null = null;
  try {
    expiresAt = input.expires ? parseExpiry(input.expires) : null;
  } catch (e) {
    throw new OperationError('invalid_arguments', (e as Error).message);
  }
  const userName = input.user ?? OPERATOR_USER;
  const user = await userByName(t.db, userName);
  if (!user) throw refused('unknown_user', { user: userName });
  if (user.disabledAt)
    throw new OperationError('invalid_arguments', `the user "${userName}" is disabled; no key was minted`);
  if (user.vaultId === null)
    throw new OperationError(
      'invalid_arguments',
      `the user "${userName}" is bound to no vault (it was removed); no key was minted`,
    );
  const { raw, record } = await createApiKey(t.db, {
    name: input.name,
    scope,
    vaultId: user.vaultId,
    userId: user.id,
    expiresAt,
  });
  t.forgetKeys(); // a miss cached for this key's hash must not outlive its creation
  return { raw, key: keyRow(record) };
}

export async function keysListOp(t: KeyTarget): Promise<KeyRow[]> {
  return (await listApiKeys(t.db)).map(keyRow);
}

/** Revoke keys by id, name or prefix (`only.exact`: the id alone; `only.userName`: of that user only). */
export async function keysRevokeOp(
  t: KeyTarget,
  which: string,
  only: { exact?: boolean; userName?: string } = {},
): Promise<{ revoked: number }> {
  const ids = await revokeApiKey(t.db, which, only);
  const revoked = ids.length;
  t.forgetKeys();
  // Requests re-check the key anyway; this ends the sessions and listen streams that would outlive it.
  if (revoked > 0) await t.closeSessionsOf?.(new Set(ids));
  if (revoked === 0)
    throw new OperationError(
      'not_found',
      `no active key matches "${which}" (id, name or prefix); see exocortex keys list`,
    );
  return { revoked };
}

function keyRow(k: ApiKeyRecord): KeyRow {
  const state = k.revokedAt ? 'revoked' : k.expiresAt && k.expiresAt.getTime() <= Date.now() ? 'expired' : 'active';
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    scope: k.scope,
    user: k.userName,
    state,
    expiresAt: k.expiresAt?.toISOString() ?? null,
    lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
  };
}

export interface Progress {
  readonly done: number;
  readonly total: number;
}

export interface IndexSummary {
  readonly seconds: number;
  readonly scanned: number;
  readonly indexed: number;
  readonly written: number;
  readonly renamed: number;
  readonly removed: number;
  readonly unchanged: number;
  readonly quarantined: number;
  readonly failures: number;
  readonly lastError: string | null;
  readonly quarantine: ReadonlyArray<{ path: string; reason: string }>;
}

/** One full pass (catch-up, or every note with rebuild), reporting progress until the backlog is empty. */
export async function indexOp(
  t: OperationTarget,
  opts: { rebuild: boolean; vault?: string },
  onProgress: (p: Progress) => void,
): Promise<IndexSummary> {
  let index = t.index;
  if (opts.vault !== undefined && opts.vault !== t.vault.name) {
    const served = t.vaults?.all().find((v) => v.row.name === opts.vault);
    if (!served)
      throw new OperationError('unknown_vault', `no vault named "${opts.vault}" is served; see exocortex vaults list`);
    index = served.index;
  }
  if (!index) throw new OperationError('unavailable', 'the index is not running in this process');
  const start = { ...index.state.counters };
  const t0 = Date.now();
  const progress = (): Progress => {
    const done = index.state.counters.processed - start.processed;
    const st = index.status();
    const known = st.ready || opts.rebuild ? st.scanned : Infinity;
    // pending counts a batch still in flight that `processed` may already include: never past the vault.
    return { done, total: Math.max(1, done, Math.min(done + st.pending, known)) };
  };
  const timer = setInterval(() => onProgress(progress()), 200);
  try {
    await index.whenReady(index.vaultId, 24 * 3600_000);
    await index.runPass({ force: opts.rebuild });
    while (Object.values(index.status().backlog).some((n) => n > 0)) await new Promise((r) => setTimeout(r, 200));
  } finally {
    clearInterval(timer);
  }
  const last = progress();
  onProgress({ done: last.done, total: Math.max(last.done, 1) });
  const c = index.state.counters;
  const st = index.status();
  const written = c.upserted - start.upserted;
  const renamed = c.renamed - start.renamed;
  const removed = c.removed - start.removed;
  // A catch-up pass skips notes whose size and mtime match without counting them: they are the rest.
  const unchanged = Math.max(0, st.indexed - written - renamed, c.unchanged - start.unchanged);
  return {
    seconds: (Date.now() - t0) / 1000,
    scanned: st.scanned,
    indexed: st.indexed,
    written,
    renamed,
    removed,
    unchanged: opts.rebuild ? c.unchanged - start.unchanged : unchanged,
    quarantined: st.quarantined,
    failures: st.failures,
    lastError: st.lastError ?? null,
    quarantine: [...index.state.quarantine].slice(0, 20).map(([path, q]) => ({ path, reason: q.reason })),
  };
}

export function renderIndexSummary(s: IndexSummary): string {
  const done = s.written + s.renamed + s.removed + s.unchanged;
  const lines = [
    `scanned ${s.scanned} notes in ${s.seconds.toFixed(1)} s (${Math.round(done / Math.max(s.seconds, 0.001))} notes/s)`,
    `indexed ${s.indexed}: ${s.written} written, ${s.renamed} renamed, ${s.removed} removed, ${s.unchanged} unchanged`,
    `quarantined ${s.quarantined}${s.failures ? `, ${s.failures} failures (last: ${s.lastError})` : ''}`,
    ...s.quarantine.map((q) => `  ${q.path}: ${q.reason}`),
  ];
  if (s.quarantined > s.quarantine.length) lines.push(`  … and ${s.quarantined - s.quarantine.length} more`);
  return lines.join('\n');
}

/** `exocortex <family> <command>`: the family's command, with its settings and migrations, on this owner. */
export async function familyCommandOp(
  t: OperationTarget,
  familyName: string,
  commandName: string | undefined,
  args: readonly string[],
  print: (line: string) => void,
  /** One vault only (the panel's selector); the command must declare `vaultScoped`. */
  onlyVault?: VaultHandle,
): Promise<number> {
  const resolved = await t.manager.resolveFamily(t.settings, familyName);
  if (!resolved)
    throw new OperationError(
      'not_found',
      `"${familyName}" is neither a command nor an installed family; see exocortex --help`,
      2,
    );
  const commands = resolved.family.commands ?? {};
  const command = commandName ? commands[commandName] : undefined;
  if (!command) {
    const list = Object.entries(commands).map(([n, c]) => `  exocortex ${familyName} ${n}  ${c.description}`);
    print(
      list.length
        ? `commands of the ${familyName} family:\n${list.join('\n')}`
        : `the ${familyName} family has no commands`,
    );
    return commandName ? 2 : 0;
  }
  if (onlyVault && !command.vaultScoped)
    throw new OperationError(
      'invalid_arguments',
      `${familyName} ${commandName} acts on every vault at once; it takes no vault`,
      2,
    );
  if (resolved.family.migrations) await migrate(t.db, `family_${familyName}`, resolved.family.migrations);
  await command.run({ db: t.db, log: t.log, settings: resolved.settings, vault: t.vault, onlyVault, args, print });
  return 0;
}
