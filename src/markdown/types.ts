// The NoteModel data shapes shared by every src/markdown module and its callers.
// Plain JSON-serialisable data only (it crosses a worker-thread boundary): no classes, Maps or Dates.

/** Options for parseNote. Token figures feed the chunker; defaults live in chunks.ts. */
export interface ParseNoteOptions {
  /** Vault-relative path with `/` separators, e.g. `Folder/Note.md`. */
  path: string;
  /** Token budget per chunk (default 512). */
  chunkTokens?: number;
  /** Tokens of the previous chunk repeated at the start of the next (default 0). */
  chunkOverlap?: number;
  /**
   * Largest frontmatter block (UTF-8 bytes of the YAML between the fences) that is parsed; a larger one is
   * kept as raw text with a `too_large` error (default DEFAULT_MAX_FRONTMATTER_BYTES).
   */
  maxFrontmatterBytes?: number;
}

export type FrontmatterErrorCode =
  | 'malformed_yaml'
  | 'not_a_mapping'
  | 'unclosed_fence'
  | 'alias_limit'
  | 'too_large'
  | 'too_deep';

export interface FrontmatterError {
  code: FrontmatterErrorCode;
  message: string;
  /** 1-based line in the file. */
  line?: number;
  /** too_large: the block's size in UTF-8 bytes, and the limit it is over; too_deep: the depth limit. */
  bytes?: number;
  limit?: number;
}

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export interface Frontmatter {
  /** A closed `---` block starts on line 1 (after an optional BOM). True even when its YAML is defective. */
  present: boolean;
  /** Raw YAML source between the fences, exactly as in the file ('' when absent). */
  text: string;
  /** JSON view of the mapping; null when absent or defective. */
  data: { [key: string]: JsonValue } | null;
  error?: FrontmatterError;
  /** Byte offset of the first body byte: just after the closing fence's line terminator, else 0 (or 3 after a BOM). */
  bodyStart: number;
}

export interface NoteTag {
  /** Identity: lower-cased, without `#` (see tagIdentity). */
  tag: string;
  /** Original spelling, without `#`. */
  display: string;
  source: 'frontmatter' | 'inline';
  /** 1-based line (inline tags only). */
  line?: number;
}

export interface Heading {
  /** 1-based document order: the `#N` of read_note(path, section="#N"). */
  ordinal: number;
  depth: number;
  text: string;
  /** Enclosing heading texts, outermost first, joined by `/` (ends with this heading's text). */
  path: string;
  line: number;
  /** Byte range of the heading line, terminator excluded. */
  start: number;
  end: number;
  /** Section body: from the line after the heading to the next heading of depth <= this one, or EOF. */
  bodyStart: number;
  bodyEnd: number;
  /** End of the text this heading owns directly (next heading of any depth, or EOF). */
  ownEnd: number;
  /** bodyEnd - bodyStart, in bytes. */
  size: number;
  /** Another heading with the same text has the same parent heading. */
  duplicateSibling: boolean;
}

export type LinkKind = 'wikilink' | 'embed' | 'markdown';

export interface Link {
  kind: LinkKind;
  /** Markdown image syntax `![](x)` or wikilink embed `![[x]]`. */
  embed: boolean;
  /** Verbatim source text of the link. */
  raw: string;
  /** Link target without anchor or alias; '' for a same-note link `[[#h]]`. Markdown targets are percent-decoded. */
  target: string;
  /** Heading anchor (without `#`), when the link names one. */
  anchor?: string;
  /** Block id (without `^`), for `[[t#^id]]`. */
  blockRef?: string;
  /** Display text: `[[t|alias]]` alias, or a markdown link's text. */
  alias?: string;
  /** Byte offsets into the whole file; the bytes between them are `raw`. */
  start: number;
  end: number;
  line: number;
  inFrontmatter: boolean;
}

export interface BlockId {
  id: string;
  line: number;
  /** Byte offset of the `^`. */
  start: number;
}

export type TaskStatusType = 'todo' | 'done' | 'cancelled' | 'in_progress' | 'other';
export type TaskPriority = 'highest' | 'high' | 'medium' | 'low' | 'lowest';

export interface Task {
  line: number;
  /** The single character inside `[ ]`. */
  status: string;
  statusType: TaskStatusType;
  /** Description with Tasks-plugin fields and a trailing block id removed. */
  text: string;
  /** The whole source line, terminator excluded. */
  raw: string;
  /** Path of the enclosing heading ('' before the first heading). */
  headingPath: string;
  /** Tag identities found on the task line. */
  tags: string[];
  due: string | null;
  scheduled: string | null;
  start: string | null;
  done: string | null;
  created: string | null;
  cancelled: string | null;
  recurrence: string | null;
  priority: TaskPriority | null;
  id: string | null;
  dependsOn: string[];
}

export interface Chunk {
  ordinal: number;
  /** `#N` of the heading whose own text this chunk comes from; 0 before the first heading. */
  sectionOrdinal: number;
  headingPath: string;
  /** `Title > Heading > Subheading` prefix, a blank line, then the content. */
  text: string;
  tokenEstimate: number;
  /** Byte range of the source text the chunk covers (overlap included). */
  start: number;
  end: number;
}

export interface NoteModel {
  path: string;
  title: string;
  aliases: string[];
  tags: NoteTag[];
  frontmatter: Frontmatter;
  /** Byte range of the body (after frontmatter) in the file. */
  body: { start: number; end: number };
  outline: Heading[];
  links: Link[];
  blockIds: BlockId[];
  tasks: Task[];
  chunks: Chunk[];
  wordCount: number;
  /** Things the parser noticed but survived (invalid UTF-8, fallback scanner, ...). Empty for a clean note. */
  problems: string[];
}

export type SectionResolution =
  | { ok: true; heading: Heading }
  | { ok: false; code: 'section_not_found' | 'section_ambiguous'; candidates: Heading[] };
