// The history family's own refusal codes (registered by the host when the family loads).
import { familyRefusals, type FamilyRefusals } from '../../src/sdk/index.js';

// Typed explicitly, so `historyRefusals.refuse(...)` narrows like a throw does.
export const historyRefusals: FamilyRefusals<'unknown_revision'> = familyRefusals({
  unknown_revision: {
    sentence:
      'There is no revision "{revision}" of "{path}" in this vault (it may have been pruned); list them with list_revisions.',
    retryable: false,
    details: ['path', 'revision'],
  },
});
