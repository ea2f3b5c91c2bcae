// Obsidian Bases inside notes: the fenced ```base blocks a note holds (their YAML is a base of its own), found
// without the note's other structure. Pure: no I/O. Shared by the bases family and read_note's base references.

/** One ```base (or ~~~base) fenced block of a note: its 1-based opening line and its text. */
export interface BaseBlock {
  readonly line: number;
  readonly text: string;
}

/** The base blocks of a note, in order. A fence closes on the same character, at least as long, as CommonMark says. */
export function baseBlocks(note: string): BaseBlock[] {
  const lines = note.split(/\r?\n/);
  const out: BaseBlock[] = [];
  let open: { fence: string; line: number; isBase: boolean; body: string[] } | null = null;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (!open) {
      const m = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/.exec(l);
      if (m) open = { fence: m[1], line: i + 1, isBase: m[2].toLowerCase() === 'base', body: [] };
      continue;
    }
    const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(l);
    if (close && close[1][0] === open.fence[0] && close[1].length >= open.fence.length) {
      if (open.isBase) out.push({ line: open.line, text: open.body.join('\n') });
      open = null;
      continue;
    }
    open.body.push(l);
  }
  return out;
}
