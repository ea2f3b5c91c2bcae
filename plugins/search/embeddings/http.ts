// HTTP plumbing shared by the embedding providers and the reranker: the plaintext rule (https or
// loopback unless allowed), a fetch bound to one configured base URL (the provider clients get only
// this one, so they can reach nothing else), JSON POST with a deadline, and retry with backoff on 429/5xx.
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

export interface RetryOptions {
  readonly retries: number;
  readonly backoffMs: number;
  readonly signal?: AbortSignal;
}

/** Run `fn`, retrying a retryable ProviderError up to `retries` times with doubling backoff. */
export async function withRetry<T>(fn: () => Promise<T>, o: RetryOptions): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      const err = e instanceof ProviderError ? e : new ProviderError(e instanceof Error ? e.message : String(e), false);
      if (!err.retryable || attempt >= o.retries || o.signal?.aborted) throw err;
      await new Promise((r) => setTimeout(r, o.backoffMs * 2 ** attempt));
    }
  }
}

export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface BoundFetchOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** Drop any Authorization header the client library adds (no key configured). */
  readonly stripAuthorization?: boolean;
}

/**
 * A fetch that only requests URLs under `base` (anything else is refused before a socket opens), with
 * one deadline and the caller's signal, and that turns any non-2xx answer into a ProviderError
 * (`HTTP <status>: <body start>`, retryable on 429/5xx) before the client library sees it.
 */
export function boundFetch(base: string, o: BoundFetchOptions): FetchLike {
  const prefix = `${base.replace(/\/+$/, '')}/`;
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!url.startsWith(prefix))
      throw new ProviderError(`refused to contact ${url.slice(0, 200)}: only ${prefix} is configured`, false);
    const headers = new Headers(init?.headers);
    if (o.stripAuthorization) headers.delete('authorization');
    const signals = [
      AbortSignal.timeout(o.timeoutMs),
      ...(o.signal ? [o.signal] : []),
      ...(init?.signal ? [init.signal] : []),
    ];
    let res: Response;
    try {
      res = await fetch(url, { ...init, headers, signal: AbortSignal.any(signals), redirect: 'error' });
    } catch (e) {
      throw new ProviderError(describeFetchError(e), !o.signal?.aborted);
    }
    if (res.ok) return res;
    const text = (await res.text().catch(() => '')).slice(0, 200);
    throw new ProviderError(
      `HTTP ${res.status}${text ? `: ${text}` : ''}`,
      res.status === 429 || res.status >= 500,
      res.status,
    );
  };
}

function describeFetchError(e: unknown): string {
  if (e instanceof Error) {
    if (e.name === 'TimeoutError') return 'timed out';
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ? `${e.message} (${cause.code})` : e.message;
  }
  return String(e);
}
