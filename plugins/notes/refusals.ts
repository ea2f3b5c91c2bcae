// The notes family's own refusal codes (registered by the host when the family loads; the wire strings are
// the ones the SDK catalogue held before they moved here). Declarations only.
import { familyRefusals, type FamilyRefusals } from '../../src/sdk/index.js';

// Typed explicitly, so `notesRefusals.refuse(...)` narrows like a throw does.
export const notesRefusals: FamilyRefusals<
  | 'section_not_found'
  | 'section_ambiguous'
  | 'malformed_frontmatter'
  | 'unclosed_fence'
  | 'find_not_found'
  | 'find_ambiguous'
  | 'regex_timeout'
> = familyRefusals({
  section_not_found: {
    sentence: 'No heading matches section "{section}" in "{path}"; headings present: {candidates}.',
    retryable: false,
    details: ['path', 'section', 'candidates'],
  },
  section_ambiguous: {
    sentence:
      'Section "{section}" matches {count} headings in "{path}"; use the path form Parent/Child or one of the ordinals {candidates}.',
    retryable: false,
    details: ['path', 'section', 'count', 'candidates'],
  },
  malformed_frontmatter: {
    sentence:
      '"{path}" has a malformed frontmatter block ({reason}); nothing was written. Repair it with edit_note(path, content, replace_frontmatter=true).',
    retryable: false,
    details: ['path', 'reason'],
  },
  unclosed_fence: {
    sentence:
      '"{path}" has an indented code fence opened on line {line} that is never closed, so section boundaries are unreliable; nothing was written. Close the fence or edit the whole note.',
    retryable: false,
    details: ['path', 'line'],
  },
  find_not_found: {
    sentence: 'The find text does not occur in "{path}"; nothing was written. The note starts: {head}',
    retryable: false,
    details: ['path', 'head'],
  },
  find_ambiguous: {
    sentence:
      'The find text occurs {count} times in "{path}"; nothing was written. Add context to make it unique, or set replace_all=true.',
    retryable: false,
    details: ['path', 'count'],
  },
  regex_timeout: {
    sentence:
      'The regular expression ran past its budget of {timeoutMs} ms and was stopped; nothing was written. Simplify it (avoid nested quantifiers).',
    retryable: false,
    details: ['timeoutMs'],
  },
});
