// MCP prompts of the notes family: short task scripts that name the tools to call, in order.
// Text only; a prompt never calls a tool itself.
import type { PromptDefinition } from '../../src/sdk/index.js';
import { completeNotePath } from './lib/note-resource.js';

const user = (text: string) => ({ messages: [{ role: 'user' as const, content: { type: 'text' as const, text } }] });

export const notesPrompts: Record<string, PromptDefinition> = {
  daily_review: {
    title: 'Daily review',
    description: "Review today's daily note and recent changes, then suggest what to carry forward.",
    async get() {
      return user(
        'Run a short daily review of my vault.\n1. Call get_periodic_note(granularity="daily") for today\'s note (and offset=-1 for yesterday\'s).\n2. Call get_recent(limit=20) to see what changed since then.\n3. Summarise what got done, list open tasks (- [ ]) that should carry over, and name notes that look unfinished.\nDo not edit anything unless I ask; when I do, pass the content_hash you read as expected_hash.',
      );
    },
  },
  weekly_review: {
    title: 'Weekly review',
    description: "Review the week's daily notes and changes and draft a weekly summary.",
    async get() {
      return user(
        'Help me with a weekly review.\n1. Call get_recent_periodic_notes(granularity="daily", count=7) and read the ones that matter with read_multiple_notes.\n2. Call get_recent(limit=50) for other notes touched this week.\n3. Draft a summary: accomplishments, open threads, decisions, and three priorities for next week.\n4. Offer to save it with get_periodic_note(granularity="weekly", create_if_missing=true) and edit_note(section=…); only write after I agree.',
      );
    },
  },
  vault_health_check: {
    title: 'Vault health check',
    description: 'Look for structural problems: malformed frontmatter, empty or huge notes, missing conventions.',
    async get() {
      return user(
        'Check the health of my vault.\n1. Call get_vault_stats for size and index state, and get_vault_guide to learn the conventions.\n2. Call list_notes(limit=200) and get_notes_info on notes that look suspicious (very small, very large, no tags, odd names).\n3. Report problems grouped by kind with the note paths: malformed frontmatter, missing titles or tags the conventions ask for, empty notes, duplicate-looking names.\nSuggest fixes, but change nothing without my go-ahead.',
      );
    },
  },
  summarize_note: {
    title: 'Summarize a note',
    description: 'Summarise one note, reading it in sections when it is long.',
    arguments: [{ name: 'path', description: 'The note to summarise', required: true, complete: completeNotePath }],
    async get(args) {
      const path = JSON.stringify(args.path ?? '');
      return user(
        `Summarise the note ${path}.\n1. Call get_notes_info(paths=[${path}]) to see its size; for a short note call read_note(path=${path}).\n2. For a long note call get_note_outline(path=${path}) and read the important sections with read_note(path=${path}, section="#N").\n3. Give a five-bullet summary, the key decisions or facts, and any open tasks, citing section headings.`,
      );
    },
  },
};
