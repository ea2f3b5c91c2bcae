// Token counts in OpenAI's cl100k encoding (js-tiktoken), so agents can budget a read. The encoder is
// pure JavaScript and slow on long text, so long text is counted on evenly spaced samples and scaled.
import type { Tiktoken } from 'js-tiktoken/lite';

/** Text up to this many characters is encoded whole. */
export const EXACT_TOKEN_CHARS = 4_000;
/** Longer text: this many samples of SAMPLE_CHARS each, spread over the text. */
const SAMPLES = 24;
const SAMPLE_CHARS = 200;

let encoder: Promise<Tiktoken> | undefined;

/** The cl100k encoder, loaded on first use (the rank table takes ~0.4 s to load). */
function cl100k(): Promise<Tiktoken> {
  encoder ??= (async () => {
    const [{ Tiktoken }, ranks] = await Promise.all([import('js-tiktoken/lite'), import('js-tiktoken/ranks/cl100k_base')]);
    return new Tiktoken(ranks.default);
  })();
  return encoder;
}

/**
 * cl100k token count: exact up to EXACT_TOKEN_CHARS, otherwise the sampled tokens-per-character rate
 * times the length (within a few percent on prose; mixed-script notes vary more).
 */
export async function countTokens(text: string): Promise<number> {
  if (!text) return 0;
  const enc = await cl100k();
  if (text.length <= EXACT_TOKEN_CHARS) return enc.encode(text).length;
  const stride = (text.length - SAMPLE_CHARS) / (SAMPLES - 1);
  let tokens = 0;
  let chars = 0;
  for (let i = 0; i < SAMPLES; i++) {
    const sample = text.slice(Math.round(i * stride), Math.round(i * stride) + SAMPLE_CHARS);
    tokens += enc.encode(sample).length;
    chars += sample.length;
  }
  return Math.round((tokens / chars) * text.length);
}
