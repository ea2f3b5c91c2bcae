// MIME type of a vault path for transfer headers and results, by extension (the family sends bytes as-is).
// Pure; never sniffs content.
import mime from 'mime-types';

export function mimeOf(path: string): string {
  return mime.lookup(path) || 'application/octet-stream';
}
