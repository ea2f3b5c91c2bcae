// One try of a client's HTTP request at the vault's owner: its headers and body streamed there and the
// owner's answer (SSE included) streamed back, and the raw answers a hijacked reply gets when no owner
// does. It never decides whether to forward, which owner to try, or whether a hop is trusted.
import http from 'node:http';
import type { ReplyView, RequestView } from '../http/exchange.js';
import type { Logger } from '../../sdk/types.js';
import { credentialOf } from './hop-signature.js';
import type { VaultLeases } from './leases.js';

/** Hop-by-hop headers (RFC 9110 §7.6.1) never copied across a hop. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate',
]);
/** Answer header of a process asked to serve a hopped request for a vault it no longer owns. */
export const NOT_OWNER_HEADER = 'x-exocortex-not-owner';
export const NO_OWNER_MESSAGE = "This vault's owner process is changing (failover); retry in a moment";

export interface ForwardMetrics {
  forwarded(seconds: number, outcome: 'ok' | 'failed' | 'no_owner'): void;
}

/** What a try at the owner shares with its Forwarder: one connection pool, one set of tallies, its hop headers. */
export interface HopContext {
  readonly agent: http.Agent;
  readonly counts: { forwarded: number; failed: number; noOwner: number };
  readonly leases: VaultLeases;
  readonly log: Logger;
  readonly metrics?: ForwardMetrics;
  /** The signed headers of a hop from this process (`credential`: what credentialOf gives at the owner). */
  readonly hopHeaders: (credential: string, as: string, client: string) => http.OutgoingHttpHeaders;
}

/**
 * One try at the owner. 'retry' when the request never reached a process that owns the vault
 * (connection refused, or the process answered that it no longer owns it): safe to send again.
 */
export function sendToOwner(
  ctx: HopContext,
  request: RequestView,
  reply: ReplyView,
  base: string,
  body: Buffer | 'stream' | undefined,
  vaultId: number,
  started: number,
  operator: boolean,
): Promise<'done' | 'retry'> {
  const target = new URL(request.url, base);
  const headers: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || name.startsWith('x-exocortex-')) continue;
    if (name === 'content-length' || name === 'transfer-encoding') continue;
    headers[name] = value;
  }
  // The admin channel's socket has no host name of its own: the owner is addressed by its internal one.
  if (operator) headers.host = target.host;
  if (body === 'stream') {
    for (const name of ['content-length', 'transfer-encoding'])
      if (request.headers[name] !== undefined) headers[name] = request.headers[name];
  } else if (body) headers['content-length'] = String(body.length);
  // The owner learns the client's address from this process (signed), never from what the client claimed.
  const client = request.ip ?? '';
  if (client) headers['x-forwarded-for'] = client;
  Object.assign(headers, ctx.hopHeaders(credentialOf(request), operator ? `operator:${vaultId}` : '', client));
  return new Promise((resolve) => {
    let streaming = false;
    const upstream = http.request(target, { method: request.method, headers, agent: ctx.agent }, (res) => {
      // A streamed body already went (in part) to the wrong process: its 503 is the client's answer.
      if (res.statusCode === 503 && res.headers[NOT_OWNER_HEADER] && body !== 'stream') {
        res.resume();
        void ctx.leases.ownerOf(vaultId, true).catch(() => undefined);
        return resolve('retry');
      }
      const out: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(res.headers))
        if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
      reply.raw.writeHead(res.statusCode ?? 502, out);
      // Flush each SSE event as it arrives: a listen stream must not wait for a buffer to fill.
      reply.raw.flushHeaders();
      res.pipe(reply.raw);
      res.on('end', () => {
        ctx.counts.forwarded++;
        ctx.metrics?.forwarded((performance.now() - started) / 1000, 'ok');
        resolve('done');
      });
      // The owner died mid-answer (a stream cut short). An SSE answer to one request ends with a JSON-RPC
      // error for its id, so the client learns the call failed (its outcome unknown) instead of waiting
      // for an answer that will not come; anything else is cut, never left hanging.
      res.on('close', () => {
        if (res.complete) return;
        ctx.counts.failed++;
        const id = requestId(body === 'stream' ? undefined : body);
        if (id !== undefined && String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
          const error = {
            jsonrpc: '2.0',
            id,
            error: {
              code: -32000,
              message:
                'The vault owner process failed while answering; retry (a write may have landed: read before writing again)',
            },
          };
          reply.raw.end(`\nevent: message\ndata: ${JSON.stringify(error)}\n\n`);
        } else reply.raw.destroy();
        resolve('done');
      });
      res.on('error', () => undefined);
    });
    upstream.on('error', (e: NodeJS.ErrnoException) => {
      void ctx.leases.ownerOf(vaultId, true).catch(() => undefined);
      // Refused: nothing reached the owner (it died or has not started listening); try the next one.
      if (e.code === 'ECONNREFUSED' && !streaming) return resolve('retry');
      ctx.counts.failed++;
      ctx.metrics?.forwarded((performance.now() - started) / 1000, 'failed');
      ctx.log.warn({ vault: vaultId, owner: base, err: e.message }, 'forward to the vault owner failed');
      // Reset after the request went out: its outcome is unknown, so it is never sent again.
      if (!reply.raw.headersSent)
        rawError(
          reply,
          502,
          'The vault owner process failed while answering; retry (a write may have landed: read before writing again)',
        );
      else reply.raw.destroy();
      resolve('done');
    });
    // The client went away (or closed its stream): end the hop too, so the owner's work is cancelled.
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) upstream.destroy();
    });
    // A streamed body starts flowing once the owner accepted the connection, so a refused one can be
    // sent elsewhere with nothing lost.
    if (body === 'stream')
      upstream.once('socket', (socket) => {
        const pipe = () => {
          streaming = true;
          request.raw.pipe(upstream);
        };
        if (socket.connecting) socket.once('connect', pipe);
        else pipe();
      });
    else upstream.end(body);
  });
}

export function noOwner(reply: ReplyView, notOwner = false): void {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    error: {
      code: -32000,
      message: NO_OWNER_MESSAGE,
      data: { refusal: { code: 'vault_unavailable', retryable: true } },
    },
    id: null,
  });
  const headers = {
    'content-type': 'application/json',
    'retry-after': '1',
    ...(notOwner ? { [NOT_OWNER_HEADER]: '1' } : {}),
  };
  reply.raw.writeHead(503, headers);
  reply.raw.end(body);
}

export function rawError(reply: ReplyView, status: number, message: string): void {
  reply.raw.writeHead(status, { 'content-type': 'application/json' });
  reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/** The JSON-RPC id of a single request body (undefined for notifications, batches and other bodies). */
function requestId(body: Buffer | undefined): string | number | undefined {
  if (!body || body.length === 0) return undefined;
  try {
    const id = (JSON.parse(body.toString('utf8')) as { id?: unknown }).id;
    return typeof id === 'string' || typeof id === 'number' ? id : undefined;
  } catch {
    return undefined;
  }
}
