// The one path guard every vault operation passes through, plus the content hash and strict UTF-8 checks.
// Paths are vault-relative POSIX strings, kept exactly as given (no NFC/NFD normalisation).

import { createHash } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import { CONTROL_CHAR_RE, printable } from '../../sdk/printable.js';
import { Refusal } from '../../sdk/refusals.js';

export const MAX_PATH_BYTES = 4000;
export const MAX_NAME_BYTES = 255;
export const HASH_RE = /^sha256:[0-9a-f]{64}$/;

export function contentHash(bytes: Uint8Array): string {
  return 'sha256:' + createHash('sha256').update(bytes).digest('hex');
}

/** Throws `invalid_path` unless `p` is an acceptable vault-relative path; returns it unchanged. */
export function checkVaultPath(p: string): string {
  const bad = (reason: string): never => {
    throw new Refusal('invalid_path', { path: p, reason });
  };
  if (typeof p !== 'string') bad('not a string');
  if (p.length === 0) bad('empty path');
  if (p.includes('\0')) bad('contains NUL');
  if (p.includes('\\')) bad('contains a backslash');
  if (p.startsWith('/')) bad('absolute paths are not allowed');
  if (!isWellFormed(p)) bad('contains a lone surrogate (not representable in UTF-8)');
  if (Buffer.byteLength(p) > MAX_PATH_BYTES) bad(`path longer than ${MAX_PATH_BYTES} bytes`);
  for (const part of p.split('/')) {
    if (part === '') bad('empty path component');
    if (part === '..' || part === '.') bad('relative components are not allowed');
    if (part.startsWith('.')) bad('hidden components (starting with ".") are out of reach');
    if (Buffer.byteLength(part) > MAX_NAME_BYTES) bad(`a name is longer than ${MAX_NAME_BYTES} bytes`);
  }
  return p;
}

/** A path about to be created (a new note, file or folder, a move's target): also no control characters. */
export function checkNewPath(p: string): string {
  checkVaultPath(p);
  const m = CONTROL_CHAR_RE.exec(p);
  if (m) {
    const code = m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
    throw new Refusal('invalid_path', {
      path: printable(p),
      reason: `new names may not contain control characters (U+${code} at offset ${m.index})`,
    });
  }
  return p;
}

/** Folder argument of list(): '' (or '.') is the vault root, anything else passes the guard. */
export function checkFolder(folder: string): string {
  return folder === '' || folder === '.' ? '' : checkVaultPath(folder);
}

export function splitPath(p: string): { dir: string; name: string } {
  const i = p.lastIndexOf('/');
  return i < 0 ? { dir: '', name: p } : { dir: p.slice(0, i), name: p.slice(i + 1) };
}

function isWellFormed(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (!(d >= 0xdc00 && d <= 0xdfff)) return false;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) return false;
  }
  return true;
}

/** Byte offset of the first invalid UTF-8 sequence, or -1 when `b` is valid UTF-8. */
export function firstInvalidUtf8(b: Uint8Array): number {
  if (isUtf8(b)) return -1;
  let i = 0;
  const n = b.length;
  while (i < n) {
    const c = b[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (c >= 0xc2 && c <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else return i;
    let cp = c & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const x = b[i + k];
      if (x === undefined || (x & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (x & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return -1;
}

/** Decode strictly: invalid bytes refuse with `not_utf8` carrying the byte offset. A BOM is kept. */
export function decodeStrict(p: string, b: Buffer): string {
  const off = firstInvalidUtf8(b);
  if (off >= 0) throw new Refusal('not_utf8', { path: p, offset: off });
  return b.toString('utf8');
}

/** Lexically resolve a symlink's text against the folder holding it; undefined when it leaves the vault. */
export function resolveLinkText(linkDir: string, text: string, rootAbs: string): string | undefined {
  let t = text;
  if (t.startsWith('/')) {
    const prefix = rootAbs.endsWith('/') ? rootAbs : rootAbs + '/';
    if (!t.startsWith(prefix)) return undefined;
    t = t.slice(prefix.length);
    linkDir = '';
  }
  const out = linkDir === '' ? [] : linkDir.split('/');
  for (const part of t.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length === 0) return undefined;
      out.pop();
    } else out.push(part);
  }
  return out.join('/');
}
