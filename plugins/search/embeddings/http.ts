// HTTP plumbing shared by the embedding providers and the reranker: the plaintext rule (https or
// loopback unless allowed), JSON POST with a deadline, and retry with backoff on 429/5xx.
import { ProviderError } from './types.js';

const LOOPBACK = new Set(['127.0.0.1', '::1', '[::1]', 'localhost']);

/** Undefined when the URL may be used; else the reason. */
export function urlProblem(raw: string, allowPlaintext: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `"${raw}" is not a URL`;
  }
  if (url.protocol === 'https:') return undefined;
  if (url.protocol !== 'http:') return `${url.protocol} URLs are not supported`;
  if (LOOPBACK.has(url.hostname) || url.hostname.startsWith('127.') || allowPlaintext) return undefined;
  return `plaintext http to ${url.hostname} is refused (use https, a loopback address, or set allowPlaintext)`;
}

export interface PostOptions {
  readonly headers?: Record<string, string>;
  readonly timeoutMs: number;
  readonly retries: number;
  readonly backoffMs: number;
  readonly signal?: AbortSignal;
}

export async function postJson<T>(url: string, body: unknown, o: PostOptions): Promise<T> {
  let attempt = 0;
  for (;;) {
    const signals = [AbortSignal.timeout(o.timeoutMs), ...(o.signal ? [o.signal] : [])];
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(o.headers ?? {}) },
        body: JSON.stringify(body),
        signal: AbortSignal.any(signals),
      });
      if (res.ok) return (await res.json()) as T;
      const retryable = res.status === 429 || res.status >= 500;
      const text = (await res.text().catch(() => '')).slice(0, 200);
      throw new ProviderError(`HTTP ${res.status}${text ? `: ${text}` : ''}`, retryable, res.status);
    } catch (e) {
      const err = e instanceof ProviderError ? e : new ProviderError(describeFetchError(e), !o.signal?.aborted);
      if (!err.retryable || attempt >= o.retries || o.signal?.aborted) throw err;
      await new Promise((r) => setTimeout(r, o.backoffMs * 2 ** attempt));
      attempt++;
    }
  }
}

function describeFetchError(e: unknown): string {
  if (e instanceof Error) {
    if (e.name === 'TimeoutError') return 'timed out';
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ? `${e.message} (${cause.code})` : e.message;
  }
  return String(e);
}
