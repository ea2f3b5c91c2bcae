// observedWrite: the observers see the write with the caller's attribution before and after it; a
// `before` that refuses stops the write; an `after` that fails is logged, never thrown; with no observer
// active the write runs alone.
import t from 'tap';
import {
  Refusal,
  observedWrite,
  serviceName,
  WRITE_OBSERVERS,
  writesObserved,
  type ServiceRequirement,
  type ToolContext,
  type WriteEvent,
  type WriteObservers,
} from '../../../src/sdk/index.js';

function ctxWith(observers: WriteObservers | undefined, warnings: string[] = []): ToolContext<any> {
  return {
    principal: { kind: 'api_key', id: 'k1', name: 'alice', user: 'alice', vaultId: 7, scopes: ['readwrite'] },
    vault: { id: 7, name: 'v', obsidianName: null, fs: {} as never },
    tool: 'edit_note',
    client: {
      progress() {},
      log() {},
      can: { elicitation: false, sampling: false, roots: false },
      clientName: 'cursor',
    },
    log: { debug() {}, info() {}, warn: (_o: unknown, m?: string) => warnings.push(m ?? ''), error() {} },
    now: () => new Date(0),
    // The SDK passes the typed ref (WRITE_OBSERVERS); a fake ctx reads its name like the host does.
    hasService: (ref: ServiceRequirement) => serviceName(ref) === WRITE_OBSERVERS.id && observers !== undefined,
    service: () => observers,
  } as unknown as ToolContext<any>;
}

const intent = {
  kind: 'replace' as const,
  target: 'note' as const,
  path: 'a.md',
  incumbent: { bytes: Buffer.from('old'), hash: 'sha256:old' },
};

t.test('before and after see the attributed event around the write', async (t) => {
  const seen: string[] = [];
  let event: WriteEvent | undefined;
  const observers: WriteObservers = {
    active: true,
    incumbentLimit: () => Number.MAX_SAFE_INTEGER,
    before: async (e) => {
      event = e;
      seen.push('before');
    },
    after: async () => {
      seen.push('after');
    },
  };
  const r = await observedWrite(ctxWith(observers), intent, async () => (seen.push('write'), 42));
  t.equal(r, 42);
  t.same(seen, ['before', 'write', 'after']);
  t.match(event, {
    vaultId: 7,
    path: 'a.md',
    origin: { id: 'k1', name: 'alice' },
    user: 'alice',
    client: 'cursor',
    tool: 'edit_note',
  });
});

t.test('a refusing before stops the write; a failing after is only logged', async (t) => {
  let wrote = false;
  const refusing: WriteObservers = {
    active: true,
    incumbentLimit: () => Number.MAX_SAFE_INTEGER,
    before: async () => {
      throw new Refusal('write_not_recorded', { path: 'a.md', reason: 'full', setting: 'history.onRecordFailure' });
    },
    after: async () => {},
  };
  await t.rejects(
    observedWrite(ctxWith(refusing), intent, async () => {
      wrote = true;
    }),
    { code: 'write_not_recorded' },
  );
  t.equal(wrote, false);
  const warnings: string[] = [];
  const failingAfter: WriteObservers = {
    active: true,
    incumbentLimit: () => Number.MAX_SAFE_INTEGER,
    before: async () => {},
    after: async () => {
      throw new Error('boom');
    },
  };
  t.equal(await observedWrite(ctxWith(failingAfter, warnings), intent, async () => 'done'), 'done');
  t.equal(warnings.length, 1);
});

t.test('without active observers the write runs alone', async (t) => {
  t.equal(writesObserved(ctxWith(undefined)), false);
  t.equal(
    writesObserved(
      ctxWith({
        active: false,
        incumbentLimit: () => Number.MAX_SAFE_INTEGER,
        before: async () => {
          t.fail();
        },
        after: async () => {
          t.fail();
        },
      }),
    ),
    false,
  );
  t.equal(await observedWrite(ctxWith(undefined), intent, async () => 'x'), 'x');
});
