// Worker-pool task: parse a note's text into heading-aware chunks for embedding, with a one-line
// preview each. Pure CPU work; runs off the event loop via ctx.workers.run({module, fn}).
import { parseNote } from '../../../src/markdown/index.js';

export interface ChunkTaskInput {
  readonly text: string;
  readonly path: string;
  readonly chunkTokens: number;
  readonly chunkOverlap: number;
  readonly maxChunks: number;
  readonly previewChars: number;
}

export interface EmbedChunk {
  readonly ordinal: number;
  readonly sectionOrdinal: number;
  readonly headingPath: string;
  readonly text: string;
  readonly preview: string;
}

export interface ChunkTaskOutput {
  readonly chunks: EmbedChunk[];
  readonly truncated: boolean;
}

export function chunkNote(input: ChunkTaskInput): ChunkTaskOutput {
  const model = parseNote(input.text, {
    path: input.path,
    chunkTokens: input.chunkTokens,
    chunkOverlap: input.chunkOverlap,
  });
  let chunks = model.chunks;
  if (chunks.length === 0) {
    // A note with only a title (or only code) still gets one vector so it can be found by meaning.
    chunks = [
      { ordinal: 1, sectionOrdinal: 0, headingPath: '', text: model.title, tokenEstimate: 1, start: 0, end: 0 },
    ];
  }
  const truncated = chunks.length > input.maxChunks;
  return {
    truncated,
    chunks: chunks.slice(0, input.maxChunks).map((c) => ({
      ordinal: c.ordinal,
      sectionOrdinal: c.sectionOrdinal,
      headingPath: c.headingPath,
      text: c.text,
      preview: previewOf(c.text, input.previewChars),
    })),
  };
}

export function previewOf(chunkText: string, chars: number): string {
  const cut = chunkText.indexOf('\n\n');
  const content = (cut >= 0 ? chunkText.slice(cut + 2) : chunkText)
    .replace(/[#>*_`|]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return content.length <= chars ? content : `${content.slice(0, chars).trimEnd()}…`;
}
