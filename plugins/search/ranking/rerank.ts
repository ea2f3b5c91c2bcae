// The optional reranker: a Jina-compatible `POST {url}` {model, query, documents} → results[{index,
// relevance_score}], one deadline for the call. Reorders candidates already fetched; never fetches more.
import { postJson, urlProblem } from '../embeddings/http.js';
import type { RerankSettings } from '../settings.js';

export type RerankOutcome =
  | { readonly ok: true; readonly scores: number[] }
  | { readonly ok: false; readonly reason: string };

export async function rerank(
  s: RerankSettings,
  query: string,
  documents: readonly string[],
  signal?: AbortSignal,
): Promise<RerankOutcome> {
  if (!s.url) return { ok: false, reason: 'not_configured' };
  const problem = urlProblem(s.url, s.allowPlaintext);
  if (problem) return { ok: false, reason: `url refused: ${problem}` };
  if (!documents.length) return { ok: true, scores: [] };
  try {
    const res = await postJson<{ results?: Array<{ index: number; relevance_score: number }> }>(
      s.url,
      { model: s.model, query, documents, top_n: documents.length },
      {
        headers: s.apiKey ? { authorization: `Bearer ${s.apiKey}` } : {},
        timeoutMs: s.timeoutMs,
        retries: 0,
        backoffMs: 0,
        signal,
      },
    );
    const scores = new Array<number>(documents.length).fill(Number.NEGATIVE_INFINITY);
    for (const r of res.results ?? [])
      if (Number.isInteger(r.index) && r.index >= 0 && r.index < documents.length)
        scores[r.index] = Number(r.relevance_score);
    if (scores.some((x) => !Number.isFinite(x))) return { ok: false, reason: 'malformed reranker response' };
    return { ok: true, scores };
  } catch (e) {
    return { ok: false, reason: `reranker failed: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/** Order of indexes by score, best first; stable on ties. */
export function orderByScores(scores: readonly number[]): number[] {
  return scores
    .map((s, i) => [s, i] as const)
    .sort((a, b) => b[0] - a[0] || a[1] - b[1])
    .map(([, i]) => i);
}
