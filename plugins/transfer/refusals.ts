// The transfer family's own refusal codes (registered by the host when the family loads; the wire strings are
// the ones the SDK catalogue held before they moved here). Declarations only.
import { familyRefusals, type FamilyRefusals } from '../../src/sdk/index.js';

// Typed explicitly, so `transferRefusals.refuse(...)` narrows like a throw does.
export const transferRefusals: FamilyRefusals<
  'no_public_origin' | 'credential_expiring' | 'url_refused' | 'fetch_failed'
> = familyRefusals({
  no_public_origin: {
    sentence:
      'No link was minted: the server has no public origin configured ({setting}), and a localhost link would not work for the person you hand it to.',
    retryable: false,
    details: ['setting'],
  },
  credential_expiring: {
    sentence:
      'No link was minted: the calling credential expires in {secondsLeft} s, under the {minSeconds} s a link needs.',
    retryable: false,
    details: ['secondsLeft', 'minSeconds'],
  },
  url_refused: {
    sentence: 'Refused to fetch that URL: {rule}. Nothing was fetched or written.',
    retryable: false,
    details: ['rule', 'host'],
  },
  fetch_failed: {
    sentence: 'Fetching from {host} failed: {reason}. Nothing was written.',
    retryable: true,
    details: ['host', 'reason'],
  },
});
