// The vault guide: a short Obsidian primer plus the vault's own conventions file, read live.
// Reads only the configured guide files at the vault root; never writes one.
import { isRefusal } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';

export const OBSIDIAN_PRIMER = `# Working in this Obsidian vault

Notes are Markdown files (\`.md\`); paths are relative to the vault root, e.g. \`Projects/Plan.md\`.

- Wikilinks: \`[[Note]]\`, \`[[Folder/Note]]\`, \`[[Note|shown text]]\`. Obsidian resolves a bare name to the
  note with that file name anywhere in the vault (same folder first when several share it).
- Heading and block links: \`[[Note#Heading]]\`, \`[[Note#^block-id]]\`; a block id is \`^id\` at the end of a line.
- Embeds: \`![[Note]]\`, \`![[Note#Heading]]\`, \`![[image.png]]\` show the target inline.
- Markdown links also work: \`[text](Folder/Note.md)\` (URL-encode spaces as %20).
- Tags: \`#tag\` or nested \`#area/topic\` in the text, or \`tags: [a, b]\` in frontmatter (no \`#\` there).
- Frontmatter: a YAML block between \`---\` lines at the very top (\`aliases\`, \`tags\`, dates, any keys).
  Change it with set_frontmatter, which keeps comments and key order.
- Callouts: \`> [!note] Title\` followed by \`> \` lines (note, tip, warning, …).
- Tasks: \`- [ ] todo\`, \`- [x] done\`; the Tasks plugin adds fields like \`📅 2025-01-31\`.
- Comments: \`%%hidden%%\` is not shown in reading view.

Editing safely: every read returns a content_hash; pass it as expected_hash to writes so a note that
changed since you read it is never overwritten. Prefer section edits (edit_note with section="Heading" or
"#N") and set_frontmatter over rewriting a whole note.`;

export type GuideOutput = NotesTools['get_vault_guide']['output'];

export async function loadGuide(ctx: NotesCtx): Promise<GuideOutput> {
  const { files, maxChars } = ctx.settings.notes.guide;
  for (const name of files) {
    try {
      const text = await ctx.vault.fs.readText(name, { maxBytes: maxChars * 4 });
      return {
        primer: OBSIDIAN_PRIMER,
        conventions_file: name,
        conventions: text.slice(0, maxChars),
        truncated: text.length > maxChars,
      };
    } catch (e) {
      if (
        isRefusal(e) &&
        ['not_found', 'too_large', 'not_utf8', 'is_directory', 'is_symlink', 'invalid_path'].includes(e.code)
      )
        continue;
      throw e;
    }
  }
  return {
    primer: OBSIDIAN_PRIMER,
    conventions_file: null,
    conventions: null,
    truncated: false,
    hint: `This vault has no ${files.join(' or ')} at its root. Write one (create_note("${files[0] ?? 'CLAUDE.md'}", …)) describing the folder layout, naming and tagging conventions, templates and what agents may change; it is served here live.`,
  };
}

export function renderGuide(o: GuideOutput): string {
  const tail =
    o.conventions !== null
      ? `\n\n# Vault-specific conventions (${o.conventions_file})\n\n${o.conventions}${o.truncated ? '\n\n[truncated: guide.maxChars]' : ''}`
      : `\n\n${o.hint}`;
  return o.primer + tail;
}
