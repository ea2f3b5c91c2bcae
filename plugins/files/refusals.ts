// The files family's own refusal codes (registered by the host when the family loads; the wire strings are
// the ones the SDK catalogue held before they moved here). Declarations only.
import { familyRefusals, type FamilyRefusals } from '../../src/sdk/index.js';

// Typed explicitly, so `filesRefusals.refuse(...)` narrows like a throw does.
export const filesRefusals: FamilyRefusals<'markdown_not_allowed' | 'invalid_content'> = familyRefusals({
  markdown_not_allowed: {
    sentence: '"{path}" is a markdown note; the file tools leave notes alone, use {instead} for it.',
    retryable: false,
    details: ['path', 'instead'],
  },
  invalid_content: { sentence: 'The content was refused: {reason}.', retryable: false, details: ['reason'] },
});
