// Link lifetimes and URLs: clamp a requested TTL, never past the calling credential's expiry, and build
// the public link with the token in the fragment. Pure except for the refusals it throws.
import { type HostInfo, type Principal } from '../../src/sdk/index.js';
import type { TransferSettings } from './settings.js';
import { transferRefusals } from './refusals.js';

export interface Lifetime {
  readonly expiresAt: Date;
  readonly seconds: number;
  /** Why the lifetime differs from what was asked, when it does. */
  readonly note: string | null;
}

export function linkLifetime(
  requested: number | undefined,
  s: TransferSettings,
  principal: Principal,
  now: Date,
): Lifetime {
  const asked = requested ?? s.defaultTtlSeconds;
  let seconds = Math.min(Math.max(asked, s.minTtlSeconds), s.maxTtlSeconds);
  let note: string | null =
    seconds !== asked
      ? `expires_in ${asked} s was clamped to ${seconds} s (allowed ${s.minTtlSeconds}–${s.maxTtlSeconds} s)`
      : null;
  if (principal.expiresAt !== undefined) {
    const runway = Math.floor((principal.expiresAt - now.getTime()) / 1000);
    if (runway < s.minRunwaySeconds)
      throw transferRefusals.refusal('credential_expiring', {
        secondsLeft: Math.max(0, runway),
        minSeconds: s.minRunwaySeconds,
      });
    if (runway < seconds) {
      seconds = runway;
      note = `the link was shortened to ${seconds} s because the calling credential expires then`;
    }
  }
  return { expiresAt: new Date(now.getTime() + seconds * 1000), seconds, note };
}

/** transfer.publicUrl when set, else the host's server.publicUrl; never a localhost fallback. */
export function publicBase(s: TransferSettings, server: HostInfo): string {
  const url = s.publicUrl ?? server.publicUrl;
  if (!url) throw transferRefusals.refusal('no_public_origin', { setting: 'server.publicUrl' });
  return new URL(url).origin;
}
