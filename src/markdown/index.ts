// The public face of src/markdown: the pure note model other layers import. Re-exports only; no logic here.
export type {
  NoteModel,
  ParseNoteOptions,
  Frontmatter,
  FrontmatterError,
  FrontmatterErrorCode,
  JsonValue,
  NoteTag,
  Heading,
  Link,
  LinkKind,
  BlockId,
  Task,
  TaskStatusType,
  TaskPriority,
  Chunk,
  SectionResolution,
} from './types.js';
export { parseNote } from './parse-note.js';
export { resolveSection } from './outline.js';
export {
  resolveLink,
  buildLinkIndex,
  orderCandidates,
  type LinkIndex,
  type LinkResolution,
  type ResolvedVia,
} from './resolve-link.js';
export {
  planLinkRewrites,
  relativePath,
  linkNameKey,
  type SourceNote,
  type RewritePlan,
  type LeftAlone,
  type MovePlan,
} from './rewrite-links.js';
export { tagIdentity } from './tags.js';
export { estimateTokens, DEFAULT_CHUNK_TOKENS, DEFAULT_CHUNK_OVERLAP } from './chunks.js';
export { countTokens, countTokensBound, loadTokenizer, EXACT_TOKEN_CHARS } from './tokens.js';
export {
  FRONTMATTER_MAX_ALIAS_COUNT,
  FRONTMATTER_MAX_DEPTH,
  DEFAULT_MAX_FRONTMATTER_BYTES,
  frontmatterBlockBytes,
} from './frontmatter.js';
export { parseDocumentBounded, type BoundedYaml } from './yaml-bounded.js';
export { MAX_MICROMARK_NESTING, MAX_MICROMARK_CHARS } from './structure.js';
export { unifiedPatch } from './unified-diff.js';
export {
  viewOfModel,
  countsOf,
  distinctTags,
  filterLinks,
  packModel,
  unpackModel,
  type PackedModel,
  type ModelView,
  type ModelViewSpec,
  type LinkFilter,
  type ModelCounts,
  type NoteModelField,
} from './model-view.js';
export { type BaseBlock, baseBlocks } from './base-blocks.js';
