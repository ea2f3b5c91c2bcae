// The call every writer makes around a publish, move or removal: build the write event from the
// call's ctx (credential, user, client, tool) and run the host's write observers before and after.
// Never reads the vault itself: the writer hands over the incumbent it already read.
import { originOf } from './define-family.js';
import type { ToolContext } from './types.js';
import type { WriteEvent, WriteObservers } from './write-hooks.js';
import { WRITE_OBSERVERS } from './services.js';

export type WriteIntent = Omit<WriteEvent, 'vaultId' | 'origin' | 'user' | 'client' | 'tool' | 'at'>;

function observersOf(ctx: ToolContext<any>): WriteObservers | undefined {
  if (!ctx.hasService(WRITE_OBSERVERS)) return undefined;
  const o: WriteObservers | undefined = ctx.service(WRITE_OBSERVERS);
  return o?.active ? o : undefined;
}

/** Whether any family observes writes now (a writer may skip hashing what nobody will look at). */
export function writesObserved(ctx: ToolContext<any>): boolean {
  return observersOf(ctx) !== undefined;
}

/**
 * Run `write` between the observers' `before` (which may refuse: nothing is written then) and `after`
 * (whose failure is logged, never thrown: the bytes are already published).
 */
export async function observedWrite<T>(ctx: ToolContext<any>, intent: WriteIntent, write: () => Promise<T>): Promise<T> {
  const observers = observersOf(ctx);
  if (!observers) return write();
  const event: WriteEvent = {
    ...intent,
    vaultId: ctx.vault.id,
    origin: originOf(ctx.principal),
    user: ctx.principal.user,
    ...(ctx.client.clientName ? { client: ctx.client.clientName } : {}),
    ...(ctx.tool ? { tool: ctx.tool } : {}),
    at: ctx.now(),
  };
  await observers.before(event);
  const result = await write();
  try {
    await observers.after(event);
  } catch (e) {
    ctx.log.warn({ err: e instanceof Error ? e.message : String(e), path: intent.path }, 'a write observer failed after the write');
  }
  return result;
}
