// Pure tag edits: add/remove one tag in frontmatter or inline, and vault-wide renames that keep nested
// children (#old/x → #new/x). Inline matches skip code spans; frontmatter goes through editFrontmatter.
import type { JsonValue } from '../../../src/markdown/index.js';
import { Refusal } from '../../../src/sdk/index.js';
import { editFrontmatter, rewriteStringItems } from './frontmatter.js';
import type { EditableNote } from './sections.js';

export const normalizeTag = (t: string): string => t.trim().replace(/^#/, '');
const TAG_OK = /^[^\s#,!"$%&'()*+.:;<=>?@[\\\]^`{|}~]+$/u;

export function assertTag(tag: string): string {
  const t = normalizeTag(tag);
  if (t === '' || !TAG_OK.test(t) || /^\d+$/.test(t))
    throw new Refusal('invalid_arguments', {
      problems: 'tag must be a tag name like "project/alpha" (letters, digits, - _ /; not only digits)',
    });
  return t;
}

function fmTags(note: EditableNote): { key: string | null; list: string[] } {
  const data = note.model.frontmatter.data ?? {};
  for (const key of ['tags', 'tag']) {
    const v = data[key];
    if (Array.isArray(v)) return { key, list: v.filter((x): x is string => typeof x === 'string') };
    if (typeof v === 'string') return { key, list: v.split(/[,\s]+/).filter(Boolean) };
  }
  return { key: null, list: [] };
}

/** Replace a tag (case-insensitive) or one nested under it, inline, outside code; `to` null removes it. */
export function rewriteInlineTags(text: string, from: string, to: string): { text: string; count: number } {
  const esc = from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const re = new RegExp(`(^|[\\s(\\[,;])#(${esc})(?=(/[^\\s#]*)?(?![\\p{L}\\p{N}_\\-/]))`, 'giu');
  let count = 0;
  const out: string[] = [];
  // Walk fenced blocks and inline code so tags inside code are left alone.
  const lines = text.split(/(?<=\n)/);
  let fence: string | null = null;
  for (const line of lines) {
    const f = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (f && f[1][0] === fence[0] && f[1].length >= fence.length) fence = null;
      out.push(line);
      continue;
    }
    if (f) {
      fence = f[1];
      out.push(line);
      continue;
    }
    const parts = line.split(/(`+[^`]*`+)/);
    out.push(
      parts
        .map((p, i) =>
          i % 2 === 1
            ? p
            : p.replace(re, (m: string, pre: string) => {
                count++;
                return `${pre}#${to}${m.slice(pre.length + 1 + from.length)}`;
              }),
        )
        .join(''),
    );
  }
  return { text: out.join(''), count };
}

export function addTag(note: EditableNote, tag: string, location: 'frontmatter' | 'inline'): string {
  const has = note.model.tags.some((t) => t.tag === tag.toLowerCase());
  if (location === 'frontmatter') {
    const { key, list } = fmTags(note);
    if (list.some((t) => normalizeTag(t).toLowerCase() === tag.toLowerCase())) return note.text;
    return editFrontmatter(note, { [key ?? 'tags']: [...list, tag] as JsonValue }, []).text;
  }
  if (has && note.model.tags.some((t) => t.source === 'inline' && t.tag === tag.toLowerCase())) return note.text;
  const sep = note.text.length === 0 || note.text.endsWith('\n') ? '' : '\n';
  return `${note.text}${sep}#${tag}\n`;
}

export function removeTag(note: EditableNote, tag: string, location: 'frontmatter' | 'inline'): string {
  if (location === 'frontmatter') {
    const { key, list } = fmTags(note);
    if (!key) return note.text;
    const kept = list.filter((t) => normalizeTag(t).toLowerCase() !== tag.toLowerCase());
    if (kept.length === list.length) return note.text;
    return editFrontmatter(note, kept.length ? { [key]: kept } : {}, kept.length ? [] : [key]).text;
  }
  const bodyStart = Buffer.from(note.text, 'utf8').subarray(0, note.model.body.start).toString('utf8').length;
  const body = note.text.slice(bodyStart);
  const esc = tag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const re = new RegExp(`(^|[ \\t])#${esc}(?![\\p{L}\\p{N}_\\-/])`, 'giu');
  const lines = body.split(/(?<=\n)/);
  let fence: string | null = null;
  const out = lines.map((line) => {
    const f = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (f && f[1][0] === fence[0] && f[1].length >= fence.length) fence = null;
      return line;
    }
    if (f) {
      fence = f[1];
      return line;
    }
    const parts = line.split(/(`+[^`]*`+)/);
    const replaced = parts.map((p, i) => (i % 2 === 1 ? p : p.replace(re, ''))).join('');
    if (replaced === line) return line;
    return replaced.trim() === '' ? '' : replaced.replace(/^[ \t]+(?=\S)/, (ws) => (line.startsWith(ws) ? ws : ''));
  });
  return note.text.slice(0, bodyStart) + out.join('');
}

/** Rename `from` (and nested children) to `to` in frontmatter tag lists and inline, outside code. */
export function renameTagInNote(note: EditableNote, from: string, to: string): { text: string; count: number } {
  let text = note.text;
  let count = 0;
  const { key, list } = fmTags(note);
  const low = from.toLowerCase();
  if (
    key &&
    list.some((t) => {
      const n = normalizeTag(t).toLowerCase();
      return n === low || n.startsWith(`${low}/`);
    })
  ) {
    const rename = (t: string): string => {
      const hash = t.startsWith('#') ? '#' : '';
      const n = normalizeTag(t);
      const l = n.toLowerCase();
      return l === low || l.startsWith(`${low}/`) ? hash + to + n.slice(from.length) : t;
    };
    const inPlace = rewriteStringItems(note, key, rename);
    if (inPlace) {
      text = inPlace.text;
      count += inPlace.count;
    } else {
      const renamed = list.map(rename);
      count += renamed.filter((t, i) => t !== list[i]).length;
      text = editFrontmatter(note, { [key]: renamed }, []).text;
    }
  }
  const bodyStartBytes =
    note.model.frontmatter.present && !note.model.frontmatter.error ? note.model.frontmatter.bodyStart : 0;
  const bodyStart = Buffer.from(note.text, 'utf8').subarray(0, bodyStartBytes).toString('utf8').length;
  const headLen = text.length - (note.text.length - bodyStart);
  const r = rewriteInlineTags(text.slice(headLen), from, to);
  return { text: text.slice(0, headLen) + r.text, count: count + r.count };
}
