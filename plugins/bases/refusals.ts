// The bases family's own refusal codes (registered by the host when the family loads). Declarations only.
import { familyRefusals, type FamilyRefusals } from '../../src/sdk/index.js';

export type BasesRefusalCode =
  | 'bases_syntax'
  | 'bases_invalid'
  | 'bases_unsupported'
  | 'bases_formula_cycle'
  | 'bases_too_complex'
  | 'bases_too_costly'
  | 'bases_no_base'
  | 'bases_no_view';

// Typed explicitly, so `basesRefusals.refuse(...)` narrows like a throw does.
export const basesRefusals: FamilyRefusals<BasesRefusalCode> = familyRefusals({
  bases_syntax: {
    sentence: 'The base expression "{expression}" does not parse: {problem} (at character {position}).',
    retryable: false,
    details: ['expression', 'problem', 'position'],
  },
  bases_invalid: {
    sentence: 'The base is not valid: {problem}.',
    retryable: false,
    details: ['problem'],
  },
  bases_unsupported: {
    sentence:
      '{feature} is outside what this server evaluates of Obsidian Bases ({where}); nothing was answered rather than a wrong answer. See docs/families/bases.md for the supported subset.',
    retryable: false,
    details: ['feature', 'where'],
  },
  bases_formula_cycle: {
    sentence: 'The formulas refer to each other in a cycle: {cycle}.',
    retryable: false,
    details: ['cycle'],
  },
  bases_too_complex: {
    sentence: 'The base is over a limit: {problem} ({setting}).',
    retryable: false,
    details: ['problem', 'setting'],
  },
  bases_too_costly: {
    sentence:
      'The query needed more work than the limit of {limit} ({setting}) allows; narrow it with filters (file.inFolder, file.hasTag) or simplify its formulas.',
    retryable: false,
    details: ['limit', 'setting'],
  },
  bases_no_base: {
    sentence: '"{path}" holds no base: {reason}.',
    retryable: false,
    details: ['path', 'reason'],
  },
  bases_no_view: {
    sentence: 'The base has no view named "{view}"; its views are: {views}.',
    retryable: false,
    details: ['view', 'views'],
  },
});
