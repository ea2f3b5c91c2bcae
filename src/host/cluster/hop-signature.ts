// The signed hop between processes: its headers, their HMAC over the request's own credential, and the
// ceiling a verified hop narrows a credential to. It reads headers and the hop key only: it never sends or
// answers a request, so how an untrusted hop is refused stays its caller's decision.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { RequestView } from '../http/exchange.js';
import { mayRead, mayWrite, type Scope } from '../../sdk/scopes.js';

/** Headers of a hop between processes: who forwarded, the scope ceiling, and their signature. */
export const HOP_HEADER = 'x-exocortex-hop';
export const CEILING_HEADER = 'x-exocortex-ceiling';
export const SIGNATURE_HEADER = 'x-exocortex-hop-signature';
/** A hop asserting the local operator of the forwarding process's admin channel (`operator:<vault id>`). */
export const AS_HEADER = 'x-exocortex-as';
/** The client's address as the forwarding process saw it (trusted only on a verified hop). */
export const CLIENT_HEADER = 'x-exocortex-client';
/** How long a signed hop stays valid (clock of the two processes: the same machine or NTP). */
const HOP_TTL_MS = 60_000;

/** What a verified hop carries: the forwarder's scope ceiling, an asserted operator, the client's address. */
export interface VerifiedHop {
  readonly scopes: Scope[];
  readonly operatorVault?: number;
  readonly client?: string;
}

/** A hop that cannot be trusted: the caller refuses it 403 and never serves it. */
export class HopRefused extends Error {}

/** The hop's signed headers, checked; undefined when the request came straight from a client. */
export function verifyHop(request: RequestView, key: Buffer): VerifiedHop | undefined {
  const hop = request.headers[HOP_HEADER];
  if (hop === undefined) return undefined;
  const ceiling = header(request, CEILING_HEADER);
  const signature = header(request, SIGNATURE_HEADER);
  if (typeof hop !== 'string' || ceiling === undefined || signature === undefined)
    throw new HopRefused('an incomplete forwarding header set');
  const [at, scopes] = splitCeiling(ceiling);
  const as = header(request, AS_HEADER) ?? '';
  const client = header(request, CLIENT_HEADER) ?? '';
  const expected = sign(key, hop, ceiling, credentialOf(request), as, client);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw new HopRefused('a forwarding signature that does not verify');
  if (!Number.isFinite(at) || Math.abs(Date.now() - at) > HOP_TTL_MS) throw new HopRefused('an expired forwarding');
  const operator = /^operator:(\d{1,12})$/.exec(as);
  return { scopes, operatorVault: operator ? Number(operator[1]) : undefined, client: client || undefined };
}

export function sign(
  key: Buffer,
  hop: string,
  ceiling: string,
  credential: string,
  as: string,
  client: string,
): Buffer {
  return createHmac('sha256', key).update(`${hop}\n${ceiling}\n${credential}\n${as}\n${client}`).digest();
}

function header(request: RequestView, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** What a hop is bound to: the request's own credential (a bearer, or the panel's session cookie). */
export function credentialOf(request: RequestView): string {
  return `${header(request, 'authorization') ?? ''}\n${header(request, 'cookie') ?? ''}`;
}

function splitCeiling(ceiling: string): [number, Scope[]] {
  const [at, ...scopes] = ceiling.split(' ').filter(Boolean);
  return [Number(at), scopes];
}

/** The scopes both sets grant, per family: what a credential may do through a narrower deployment. */
export function intersectScopes(a: readonly Scope[], b: readonly Scope[], families: readonly string[]): Scope[] {
  const out: Scope[] = [];
  for (const f of families) {
    if (mayWrite(a, f) && mayWrite(b, f)) out.push(`${f}:write`);
    else if (mayRead(a, f) && mayRead(b, f)) out.push(`${f}:read`);
  }
  return out;
}
