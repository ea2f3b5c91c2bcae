// Text from the vault (names, titles, tags) shown inside a tool's rendered lines: control characters are
// written as escapes so a crafted name cannot forge a line or a terminal sequence. Never used on data
// returned as structuredContent, which keeps the exact bytes.

// C0 controls, DEL, C1 controls, and the Unicode line and paragraph separators.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

export const CONTROL_CHAR_RE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** `text` with every control character written as \xNN (or \uNNNN), backslashes left as they are. */
export function printable(text: string): string {
  return text.replace(CONTROL, (c) => {
    const n = c.charCodeAt(0);
    return n < 0x100 ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
  });
}
