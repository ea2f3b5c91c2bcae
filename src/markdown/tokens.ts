// Token counts in OpenAI's cl100k encoding (js-tiktoken), so agents can budget a read. The encoder is
// slow JavaScript (about 4 µs per character on CJK text), so long text is counted on samples: the
// samples fit one rate for ASCII characters and one for the rest, applied to the whole text's counts.
import type { Tiktoken } from 'js-tiktoken/lite';

/** Text up to this many characters is encoded whole. */
export const EXACT_TOKEN_CHARS = 1_000;
/** Longer text: this many samples of SAMPLE_CHARS each, spread evenly over the text. */
const SAMPLES = 16;
const SAMPLE_CHARS = 80;
/** Rates used for a character class no sample contains (the cheap estimate's rates). */
const DEFAULT_ASCII_RATE = 0.25;
const DEFAULT_OTHER_RATE = 1;

interface Encoder {
  readonly enc: Tiktoken;
  /** cl100k's pre-tokenizer: BPE never merges across its matches, so counts add up per match. */
  readonly pretokens: RegExp;
}

let encoder: Promise<Encoder> | undefined;

/** The cl100k encoder, loaded on first use (the rank table takes ~0.4 s to load). */
function cl100k(): Promise<Encoder> {
  encoder ??= (async () => {
    const [{ Tiktoken }, ranks] = await Promise.all([
      import('js-tiktoken/lite'),
      import('js-tiktoken/ranks/cl100k_base'),
    ]);
    return { enc: new Tiktoken(ranks.default), pretokens: new RegExp(ranks.default.pat_str, 'gu') };
  })();
  return encoder;
}

/** Load the cl100k rank table now (~0.75 s of CPU, ~65 MiB), so a later count does not pay for it. */
export async function loadTokenizer(): Promise<void> {
  await cl100k();
}

/**
 * Token counts per pre-token (a word with its leading space, a number run, a punctuation run): notes
 * repeat their words, so most pre-tokens skip BPE, the slow part. Cleared whole when full. Only short
 * pieces are kept: a long one (a hash, a base64 run) rarely repeats and would cost its length in memory.
 */
const MEMO_LIMIT = 50_000;
const MEMO_MAX_PIECE = 32;
const memo = new Map<string, number>();

/**
 * BPE merging in js-tiktoken is quadratic in the length of one pre-token, and a pre-token has no length
 * bound: a run of CJK characters, a 60,000-letter word or a run of brackets is one pre-token (10,000 letters
 * took 10 s whole; issue 35). So every pre-token longer than its class's piece size is encoded in pieces of
 * at most that many characters, which keeps the cost linear in the text's length whatever the text. A cut
 * can only lose merges across it, so a cut pre-token counts at or slightly above the real encoder's.
 * Non-ASCII runs: CJK merges rarely span more than 8 characters. ASCII runs: pieces of 32 keep every
 * ordinary word (and most identifiers) whole, so prose counts exactly; only longer runs (a hash, a base64
 * blob, a bracket run) are cut, at about one extra token per 100 characters (+0.8% on random letters); 32 is also the memo's piece limit, so a repeated run costs one BPE.
 */
const OTHER_PIECE_CHARS = 8;
const ASCII_PIECE_CHARS = 32;
const PIECES = new RegExp(`[\\x00-\\x7f]{1,${ASCII_PIECE_CHARS}}|[^\\x00-\\x7f]{1,${OTHER_PIECE_CHARS}}`, 'g');

/** BPE of one piece; special-token text such as `<|endoftext|>` is counted as the plain text it is in a note. */
function encodePiece(enc: Tiktoken, piece: string): number {
  let n = memo.get(piece);
  if (n === undefined) {
    n = enc.encode(piece, [], []).length;
    if (piece.length <= MEMO_MAX_PIECE) {
      if (memo.size >= MEMO_LIMIT) memo.clear();
      memo.set(piece, n);
    }
  }
  return n;
}

function encodeLinear({ enc, pretokens }: Encoder, text: string): number {
  let n = 0;
  for (const m of text.matchAll(pretokens)) {
    const pre = m[0];
    if (pre.length <= OTHER_PIECE_CHARS || (pre.length <= ASCII_PIECE_CHARS && asciiCount(pre) === pre.length))
      n += encodePiece(enc, pre);
    else for (const piece of pre.matchAll(PIECES)) n += encodePiece(enc, piece[0]);
  }
  return n;
}

function asciiCount(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 0x80) n++;
  return n;
}

/**
 * Per-class rates (tokens per ASCII character, per other character) fitted to samples by least squares;
 * a class too rare in the samples to fit gets its pooled rate, or the default when it never occurs.
 */
function fitRates(samples: ReadonlyArray<{ tokens: number; ascii: number; other: number }>): {
  ascii: number;
  other: number;
} {
  let saa = 0,
    soo = 0,
    sao = 0,
    sta = 0,
    sto = 0;
  for (const s of samples) {
    saa += s.ascii * s.ascii;
    soo += s.other * s.other;
    sao += s.ascii * s.other;
    sta += s.tokens * s.ascii;
    sto += s.tokens * s.other;
  }
  const det = saa * soo - sao * sao;
  if (det > 1e-9 * saa * soo && saa > 0 && soo > 0) {
    const ascii = (sta * soo - sto * sao) / det;
    const other = (sto * saa - sta * sao) / det;
    if (ascii >= 0 && other >= 0) return { ascii, other };
  }
  const sum = (f: (s: (typeof samples)[number]) => number) => samples.reduce((n, s) => n + f(s), 0);
  const pure = (cls: 'ascii' | 'other', fallback: number) => {
    const only = samples.filter((s) => (cls === 'ascii' ? s.other === 0 : s.ascii === 0) && s[cls] > 0);
    const chars = only.reduce((n, s) => n + s[cls], 0);
    return chars > 0 ? only.reduce((n, s) => n + s.tokens, 0) / chars : fallback;
  };
  // Degenerate fit (one class everywhere, or collinear samples): pooled rates per class.
  const total = sum((s) => s.ascii + s.other);
  const rate = total > 0 ? sum((s) => s.tokens) / total : DEFAULT_ASCII_RATE;
  return {
    ascii: soo === 0 ? rate : pure('ascii', DEFAULT_ASCII_RATE),
    other: saa === 0 ? rate : pure('other', DEFAULT_OTHER_RATE),
  };
}

/** The slice start..end, trimmed to whole words where whitespace is near its ends (a cut word costs a token). */
function snapToWords(text: string, start: number, end: number): string {
  const slack = Math.floor((end - start) / 4);
  const head = text.slice(start, start + slack).search(/\s/);
  const from = start > 0 && head >= 0 ? start + head : start;
  let to = end;
  if (end < text.length) {
    const tail = text.slice(end - slack, end);
    const cut = Math.max(tail.lastIndexOf(' '), tail.lastIndexOf('\n'));
    if (cut >= 0) to = end - slack + cut;
  }
  return text.slice(from, Math.max(from + 1, to));
}

/**
 * cl100k token count: exact up to EXACT_TOKEN_CHARS; beyond, SAMPLES evenly spread samples give a
 * tokens-per-character rate for ASCII and for other characters, times the text's own counts (within a
 * few percent on prose, on CJK and on text mixing both).
 */
export async function countTokens(text: string): Promise<number> {
  if (!text) return 0;
  const enc = await cl100k();
  if (text.length <= EXACT_TOKEN_CHARS) return encodeLinear(enc, text);
  const stride = (text.length - SAMPLE_CHARS) / (SAMPLES - 1);
  const samples = [];
  for (let i = 0; i < SAMPLES; i++) {
    const sample = snapToWords(text, Math.round(i * stride), Math.round(i * stride) + SAMPLE_CHARS);
    const ascii = asciiCount(sample);
    samples.push({ tokens: encodeLinear(enc, sample), ascii, other: sample.length - ascii });
  }
  const rates = fitRates(samples);
  const ascii = asciiCount(text);
  return Math.round(rates.ascii * ascii + rates.other * (text.length - ascii));
}

/**
 * cl100k token count of the whole text, never sampled. Long pre-tokens (non-ASCII runs over 8 characters,
 * ASCII runs over 32) are encoded in pieces, which can only lose merges across a cut, so the count is at or
 * slightly above the real encoder's (at most +1% on the corpora; the result-budget test checks it against an
 * independent cl100k tokenizer). The result budget counts with it. Linear in the text's length: tens of
 * microseconds per fresh CJK piece or 32-character ASCII piece (repeats are memoised): run it in the worker
 * pool.
 */
export async function countTokensBound(text: string): Promise<number> {
  if (!text) return 0;
  return encodeLinear(await cl100k(), text);
}
