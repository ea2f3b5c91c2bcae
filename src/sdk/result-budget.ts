// The result budget: every tool result, text and structuredContent together, fits a token budget, and a
// result cut to fit says how to continue. Tools declare how they page (ResultPaging); the host runs the fit.
// Pure: the host injects the tool run, the rendering and the token counter; nothing here does I/O.

/**
 * How a tool's answer shrinks to the result budget. `limit` names an integer argument that sizes the
 * answer (items per page, characters of content); the host lowers it and runs the tool again until the
 * result fits. The tool's own continuation (next_cursor, next_offset) then covers what was left out.
 */
export interface ResultPaging<I = any, O = any> {
  /** The integer argument that sizes the answer (declared in the tool's inputSchema). */
  readonly limit: string;
  /** How much this answer holds, in the unit of `limit` (items listed, characters or bytes returned). */
  readonly size: (output: O) => number;
  /** The arguments of the call that continues where this answer stops; undefined when nothing is left. */
  readonly next: (input: I, output: O) => Record<string, unknown> | undefined;
}

/** What the host says in a result it cut to fit the budget. */
export interface BudgetCut {
  /** The sizing argument's value the fitted answer was produced with. */
  readonly limit: number;
  readonly budget: number;
  readonly setting: string;
  /** The call that continues (tool name and arguments), when there is more. */
  readonly continueWith?: { tool: string; arguments: Record<string, unknown> };
}

/** The texts a client's model may read from one result: each text block, and structuredContent as JSON. */
export interface MeasuredResult {
  readonly texts: readonly string[];
}

/**
 * A strict upper bound on cl100k tokens with no tokenizer: every token encodes at least one UTF-8 byte.
 * A result whose bytes fit the budget fits it whatever the script (CJK, emoji, base64).
 */
export function utf8Bytes(texts: readonly string[]): number {
  let n = 0;
  for (const t of texts) n += Buffer.byteLength(t, 'utf8');
  return n;
}

/** Past this many bytes per budget token a result is sized by a sampled estimate before it is counted. */
const ESTIMATE_ABOVE_BYTES_PER_TOKEN = 6;
/** Aim this far under the budget when shrinking, so that the next run usually fits at once. */
const SHRINK_TARGET = 0.9;
/** Runs of the tool, the first included, before the host gives up and refuses. */
const MAX_RUNS = 6;

export interface FitOptions<O> {
  readonly budget: number;
  readonly paging?: ResultPaging<Record<string, unknown>, O>;
  readonly input: Record<string, unknown>;
  readonly output: O;
  /** Run the tool again with these arguments. */
  run(input: Record<string, unknown>): Promise<O>;
  /** The result's texts as the client will get them, with the cut notice when `cut` is given. */
  measure(output: O, input: Record<string, unknown>, cut: BudgetCut | undefined): MeasuredResult;
  /** Token counts: `exact` at or above the real count; otherwise a sampled estimate (within a few percent). */
  count(texts: readonly string[], exact: boolean): Promise<number>;
  /** The cut notice's facts other than the limit (budget, setting, tool name for continue_with). */
  readonly tool: string;
  readonly setting: string;
}

export type FitOutcome<O> =
  | {
      readonly fits: true;
      readonly output: O;
      readonly input: Record<string, unknown>;
      readonly cut?: BudgetCut;
      readonly tokens: number;
    }
  | { readonly fits: false; readonly tokens: number; readonly smallest?: number };

/**
 * Fit one tool answer to the budget. A result within the budget by its bytes is returned as it is; one over
 * it is counted, and while it stays over, the tool's sizing argument is lowered in proportion and the tool
 * runs again. Gives up (fits: false) for a tool that does not page, or one that cannot shrink further.
 */
export async function fitToBudget<O>(o: FitOptions<O>): Promise<FitOutcome<O>> {
  let input = o.input;
  let output = o.output;
  let cut: BudgetCut | undefined;
  let tokens = 0;
  for (let runs = 1; ; runs++) {
    const { texts } = o.measure(output, input, cut);
    const bytes = utf8Bytes(texts);
    if (bytes <= o.budget) return { fits: true, output, input, cut, tokens: bytes };
    const estimated = bytes > ESTIMATE_ABOVE_BYTES_PER_TOKEN * o.budget;
    // A sampled estimate only sizes the next run (padded for its error); only an exact count admits a result.
    tokens = estimated ? Math.ceil((await o.count(texts, false)) * 1.15) : await o.count(texts, true);
    if (estimated && tokens <= o.budget) tokens = await o.count(texts, true);
    if (tokens <= o.budget) return { fits: true, output, input, cut, tokens };
    const paging = o.paging;
    if (!paging || runs >= MAX_RUNS) return { fits: false, tokens };
    const size = paging.size(output);
    if (size <= 1) return { fits: false, tokens, smallest: size };
    const limit = Math.max(1, Math.min(size - 1, Math.floor((size * SHRINK_TARGET * o.budget) / tokens)));
    input = { ...o.input, [paging.limit]: limit };
    output = await o.run(input);
    const next = paging.next(input, output);
    cut = {
      limit,
      budget: o.budget,
      setting: o.setting,
      ...(next ? { continueWith: { tool: o.tool, arguments: next } } : {}),
    };
  }
}

/** The cut notice as one sentence. */
export function budgetSentence(cut: BudgetCut, limitName: string): string {
  const how = cut.continueWith
    ? ` Continue with ${cut.continueWith.tool}(${JSON.stringify(cut.continueWith.arguments)}).`
    : '';
  return `Cut to fit the result budget of ${cut.budget} tokens (${cut.setting}): ${limitName} lowered to ${cut.limit}.${how}`;
}

/** The fields a cut adds to structuredContent (declared by the host in every paging tool's outputSchema). */
export function budgetFields(
  cut: BudgetCut,
  limitName: string,
): { budget_notice: string; continue_with?: { tool: string; arguments: Record<string, unknown> } } {
  return {
    budget_notice: budgetSentence(cut, limitName),
    ...(cut.continueWith ? { continue_with: cut.continueWith } : {}),
  };
}
