// What kind of file a path holds (text, image, binary) and its MIME type, from name and bytes.
// Pure functions: no I/O, never decides anything about permissions.
import { isUtf8 } from 'node:buffer';
import mime from 'mime-types';

export type FileKind = 'text' | 'image' | 'binary';

/** Images an MCP client can render as an image content block. */
const IMAGE_MIMES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

const TEXT_MIMES = new Set([
  'application/json',
  'application/ld+json',
  'application/xml',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/javascript',
  'application/x-javascript',
  'application/typescript',
  'application/sql',
  'application/x-sh',
  'application/x-python',
  'application/csv',
  'image/svg+xml',
]);

const EXTRA_TEXT_EXT = new Set([
  '.ts',
  '.tsx',
  '.py',
  '.rb',
  '.go',
  '.rs',
  '.c',
  '.h',
  '.cpp',
  '.java',
  '.kt',
  '.swift',
  '.toml',
  '.ini',
  '.cfg',
  '.conf',
  '.log',
  '.env',
  '.tex',
  '.bib',
  '.org',
  '.rst',
  '.adoc',
  '.canvas',
  '.base',
]);

/** `.md` and `.markdown` belong to the note tools. */
export function isMarkdownPath(path: string): boolean {
  return /\.(md|markdown)$/i.test(path);
}

function extOf(path: string): string {
  const base = path.slice(path.lastIndexOf('/') + 1);
  const i = base.lastIndexOf('.');
  return i > 0 ? base.slice(i).toLowerCase() : '';
}

export function mimeOf(path: string): string {
  const ext = extOf(path);
  if (ext === '.canvas' || ext === '.base') return 'application/json';
  if (EXTRA_TEXT_EXT.has(ext) && !mime.lookup(path)) return 'text/plain';
  return mime.lookup(path) || 'application/octet-stream';
}

function isTextMime(m: string): boolean {
  return m.startsWith('text/') || TEXT_MIMES.has(m) || m.endsWith('+json') || m.endsWith('+xml');
}

/** Sniff a few well-known binary signatures so a misnamed file is not shown as text. */
export function sniffImage(bytes: Uint8Array): string | undefined {
  const b = bytes;
  if (b.length >= 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 6 && b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x38) return 'image/gif';
  if (
    b.length >= 12 &&
    b[0] === 0x52 &&
    b[1] === 0x49 &&
    b[2] === 0x46 &&
    b[3] === 0x46 &&
    b[8] === 0x57 &&
    b[9] === 0x45 &&
    b[10] === 0x42 &&
    b[11] === 0x50
  )
    return 'image/webp';
  return undefined;
}

/** Decide how to show a file: by its bytes first (images, NULs, UTF-8 validity), then by its name. */
export function classify(path: string, bytes: Uint8Array): { kind: FileKind; mime: string } {
  const byName = mimeOf(path);
  const sniffed = sniffImage(bytes);
  if (sniffed) return { kind: 'image', mime: sniffed };
  if (IMAGE_MIMES.has(byName)) return { kind: 'binary', mime: byName };
  const looksText = !bytes.includes(0) && isUtf8(bytes);
  if (looksText && (isTextMime(byName) || byName === 'application/octet-stream')) {
    return { kind: 'text', mime: byName === 'application/octet-stream' ? 'text/plain' : byName };
  }
  return { kind: 'binary', mime: byName };
}

export const HASH_RE = /^sha256:[0-9a-f]{64}$/;

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(2)} GB`;
}
