// The calls every writer makes around a publish, move or removal: build the write event (credential,
// user, client, tool) and run the host's write observers before and after. Never reads the vault for
// itself, except the file helpers below, which read an incumbent once (within the observers' limit)
// and bind the replace to exactly those bytes.
import { originOf } from './define-family.js';
import type { ServiceLookup } from './service-ref.js';
import { WRITE_OBSERVERS } from './services.js';
import type { ChangeOrigin, ToolContext, VaultHandle } from './types.js';
import type { WriteResult } from './vault.js';
import type { WriteEvent, WriteObservers } from './write-hooks.js';

export type WriteIntent = Omit<WriteEvent, 'vaultId' | 'origin' | 'user' | 'client' | 'clientId' | 'tool' | 'at'>;

/** Who writes: a tool call's principal, or (an upload link publishing) the credential that minted it. */
export interface WriteAuthor {
  readonly origin?: ChangeOrigin;
  readonly user?: string;
  readonly client?: string;
  readonly clientId?: string;
  readonly tool?: string;
}

/** What a write needs from its caller: the services, the vault, the author and the clock. */
export interface WriteScope {
  readonly services: ServiceLookup;
  readonly vault: VaultHandle;
  readonly author: WriteAuthor;
  now(): Date;
}

/**
 * The write scope of a tool call. An OAuth token's registered client names the writer before the name an
 * MCP session gives itself: a connector without a session (claude.ai's backend) is still named.
 */
export function toolWriteScope(ctx: ToolContext<unknown>): WriteScope {
  const oauth = ctx.principal.client;
  const client = oauth?.name ?? ctx.client.clientName;
  return {
    services: ctx,
    vault: ctx.vault,
    author: {
      origin: originOf(ctx.principal),
      user: ctx.principal.user,
      ...(client ? { client } : {}),
      ...(oauth ? { clientId: oauth.id } : {}),
      ...(ctx.tool ? { tool: ctx.tool } : {}),
    },
    now: () => ctx.now(),
  };
}

function observersOf(services: ServiceLookup): WriteObservers | undefined {
  if (!services.hasService(WRITE_OBSERVERS)) return undefined;
  const o: WriteObservers | undefined = services.service(WRITE_OBSERVERS);
  return o?.active ? o : undefined;
}

/** Whether any family observes writes now (a writer may skip hashing what nobody will look at). */
export function writesObserved(services: ServiceLookup): boolean {
  return observersOf(services) !== undefined;
}

/**
 * Run `write` between the observers' `before` (which may refuse: nothing is written then) and `after`
 * (whose failure is logged, never thrown: the bytes are already published).
 */
export async function observeWrite<T>(
  scope: WriteScope,
  intent: WriteIntent,
  write: () => Promise<T>,
  log?: { warn(o: object, m: string): void },
): Promise<T> {
  const observers = observersOf(scope.services);
  if (!observers) return write();
  const event: WriteEvent = { ...intent, ...scope.author, vaultId: scope.vault.id, at: scope.now() };
  await observers.before(event);
  const result = await write();
  try {
    await observers.after(event);
  } catch (e) {
    log?.warn(
      { err: e instanceof Error ? e.message : String(e), path: intent.path },
      'a write observer failed after the write',
    );
  }
  return result;
}

/** `observeWrite` for a tool call. */
export function observedWrite<T>(ctx: ToolContext<unknown>, intent: WriteIntent, write: () => Promise<T>): Promise<T> {
  return observeWrite(toolWriteScope(ctx), intent, write, ctx.log);
}

/** No-clobber create of a file (any kind), seen by the write observers. */
export function createFileObserved(
  scope: WriteScope,
  path: string,
  bytes: Uint8Array,
  log?: { warn(o: object, m: string): void },
): Promise<WriteResult> {
  const fs = scope.vault.fs;
  if (!writesObserved(scope.services)) return fs.create(path, bytes);
  return observeWrite(
    scope,
    { kind: 'create', target: 'file', path, next: { bytes, hash: fs.contentHash(bytes) } },
    () => fs.create(path, bytes),
    log,
  );
}

/**
 * Replace a file, seen by the write observers. The core checks `expectedHash` itself and never hands
 * the incumbent out, so when someone observes writes the incumbent is read here once — when it is no
 * larger than both `maxReadBytes` and what the observers keep — and the replace is bound to exactly
 * those bytes (a stale `expectedHash` is refused before anything is written). A larger incumbent is
 * replaced unread, and the observers are told its size.
 */
export async function replaceFileObserved(
  scope: WriteScope,
  path: string,
  bytes: Uint8Array,
  options: { expectedHash?: string; maxReadBytes: number; refuseStale: (current: string) => never },
  log?: { warn(o: object, m: string): void },
): Promise<WriteResult> {
  const fs = scope.vault.fs;
  const observers = observersOf(scope.services);
  const expected = options.expectedHash !== undefined ? { expectedHash: options.expectedHash } : {};
  if (!observers) return fs.replace(path, bytes, expected);
  const next = { bytes, hash: fs.contentHash(bytes) };
  const st = await fs.stat(path);
  if (st.kind === 'file' && st.size > Math.min(options.maxReadBytes, observers.incumbentLimit())) {
    return observeWrite(
      scope,
      { kind: 'replace', target: 'file', path, incumbentUnread: { size: st.size }, next },
      () => fs.replace(path, bytes, expected),
      log,
    );
  }
  const before = await fs.readBytes(path, { maxBytes: options.maxReadBytes });
  const hash = fs.contentHash(before);
  if (options.expectedHash !== undefined && options.expectedHash !== hash) options.refuseStale(hash);
  return observeWrite(
    scope,
    { kind: 'replace', target: 'file', path, incumbent: { bytes: before, hash }, next },
    () => fs.replace(path, bytes, { expectedHash: hash }),
    log,
  );
}
