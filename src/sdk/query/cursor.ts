// The one paging cursor codec: opaque, versioned, and bound to the user and vault it was issued to, so a
// cursor handed from one user or vault to another is refused instead of silently paging someone's query.
// Pure (node:crypto only); it refuses with invalid_arguments and never reads the database.
import { createHash } from 'node:crypto';
import { Refusal } from '../refusals.js';

/** Who a cursor belongs to: the vault and the user behind the credential (any credential of that user). */
export interface CursorOwner {
  readonly principal: { readonly user: string; readonly vaultId: number };
}

const VERSION = 'c1';

/**
 * A codec for one tool's keyset position `K`. The wire form is `c1.<binding>.<base64url JSON>`; the
 * binding is a short digest of tool, vault and user, so it names nobody. `valid` checks a decoded key's shape.
 */
export interface CursorCodec<K> {
  encode(owner: CursorOwner, key: K): string;
  /** The key, or undefined for an absent cursor; refuses a malformed, foreign or other-tool cursor. */
  decode(owner: CursorOwner, raw: string | undefined | null): K | undefined;
}

export function cursorCodec<K>(tool: string, valid: (key: unknown) => key is K): CursorCodec<K> {
  const binding = (owner: CursorOwner) =>
    createHash('sha256')
      .update(`${tool}\0${owner.principal.vaultId}\0${owner.principal.user}`)
      .digest('base64url')
      .slice(0, 12);
  const refuse = (problem: string): never => {
    throw new Refusal('invalid_arguments', {
      problems: `cursor ${problem}; pass the next_cursor of a previous answer of ${tool} verbatim`,
      argument: 'cursor',
    });
  };
  return {
    encode: (owner, key) => `${VERSION}.${binding(owner)}.${Buffer.from(JSON.stringify(key)).toString('base64url')}`,
    decode(owner, raw) {
      if (raw === undefined || raw === null) return undefined;
      const m = /^([a-z0-9]+)\.([A-Za-z0-9_-]{12})\.([A-Za-z0-9_-]*)$/.exec(raw);
      if (!m || m[1] !== VERSION) return refuse('is not one this server issued');
      if (m[2] !== binding(owner)) return refuse('was issued to another user, vault or tool');
      let key: unknown;
      try {
        key = JSON.parse(Buffer.from(m[3], 'base64url').toString('utf8'));
      } catch {
        return refuse('is not one this server issued');
      }
      return valid(key) ? key : refuse('is not one this server issued');
    },
  };
}
