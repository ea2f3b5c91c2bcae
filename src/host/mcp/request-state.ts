// Seals the requestState a family returns with `inputNeeded` (HMAC-SHA256, an expiry, bound to the
// credential and the request method) and opens it when the client echoes it back. A state that fails
// is refused by the SDK seam as -32602 before any family code runs: families only ever see state they
// minted themselves. Must never hand a family a string the client made up.
import { randomBytes } from 'node:crypto';
import { createRequestStateCodec, type RequestStateCodec, type ServerContext } from './sdk.js';

/** What travels inside the seal: the family's state, the credential and the method it was minted for. */
interface SealedState {
  readonly s: string;
  readonly p: string;
  readonly m: string;
}

/**
 * How long a client has to answer an input request (an elicitation waits on a person). The key is
 * per process, so every round of a flow must reach the process that minted its state.
 */
export const REQUEST_STATE_TTL_SECONDS = 600;

export class RequestStateSeal {
  private readonly codec: RequestStateCodec<SealedState>;

  constructor(key: Uint8Array = randomBytes(32), ttlSeconds = REQUEST_STATE_TTL_SECONDS) {
    this.codec = createRequestStateCodec<SealedState>({ key, ttlSeconds });
  }

  seal(state: string, principalId: string, method: string): Promise<string> {
    return this.codec.mint({ s: state, p: principalId, m: method });
  }

  /** The family's state, or a throw (forged, expired, another credential's or another method's). */
  async open(wire: string, principalId: string, ctx: ServerContext): Promise<string> {
    const sealed = await this.codec.verify(wire, ctx);
    if (typeof sealed?.s !== 'string' || sealed.p !== principalId || sealed.m !== ctx.mcpReq.method)
      throw new Error('bind');
    return sealed.s;
  }
}
