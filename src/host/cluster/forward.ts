// Any process accepts any request: once the credential names its vault, a process that does not own the
// vault streams the raw HTTP request to the owner and the owner's answer back (SSE and listen streams
// included), and a client that goes away aborts the hop. The owner verifies the bearer again (the hop
// carries it untouched), so a forwarder can never widen what a credential may do; it can only narrow
// it: its own families and read-only switches travel as a scope ceiling, signed with the cluster's hop
// key (a secret in PostgreSQL), and the owner intersects the credential's scopes with it. A hop header
// without a valid signature is refused, so nothing from outside passes for a forwarder.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { mayRead, mayWrite, type Scope } from '../../sdk/scopes.js';
import type { Logger, Principal } from '../../sdk/types.js';
import type { VaultLeases } from './leases.js';

/** Headers of a hop between processes: who forwarded, the scope ceiling, and their signature. */
export const HOP_HEADER = 'x-exocortex-hop';
const CEILING_HEADER = 'x-exocortex-ceiling';
const SIGNATURE_HEADER = 'x-exocortex-hop-signature';
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
const NOT_OWNER_HEADER = 'x-exocortex-not-owner';
/** How long a request waits for a vault without a live owner (a failover) before it is refused. */
const OWNER_WAIT_MS = 8000;
const OWNER_POLL_MS = 100;
/** How long a signed hop stays valid (clock of the two processes: the same machine or NTP). */
const HOP_TTL_MS = 60_000;

export interface ForwardMetrics {
  forwarded(seconds: number, outcome: 'ok' | 'failed' | 'no_owner'): void;
}

export interface ForwarderOptions {
  readonly leases: VaultLeases;
  readonly key: Buffer;
  /** This process's own ceiling: the scopes its families and read-only switches allow. */
  readonly ceiling: () => Scope[];
  /** Family names serving on this process (to intersect a hop's ceiling with a credential's scopes). */
  readonly families: () => string[];
  readonly log: Logger;
  readonly metrics?: ForwardMetrics;
  /** The largest request body relayed (server.bodyLimitBytes, as the owner enforces). */
  readonly bodyLimitBytes: number;
}

export class Forwarder {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  /** Calls forwarded, and failed hops (for /health and tests). */
  readonly counts = { forwarded: 0, failed: 0, noOwner: 0 };

  constructor(private readonly o: ForwarderOptions) {}

  /**
   * The principal as this process may serve it: a request that arrived over a valid hop is narrowed to
   * the forwarder's ceiling; an invalid hop throws (the caller refuses it 403).
   */
  narrow(request: FastifyRequest, principal: Principal): Principal {
    const hop = request.headers[HOP_HEADER];
    if (hop === undefined) return principal;
    const ceiling = header(request, CEILING_HEADER);
    const signature = header(request, SIGNATURE_HEADER);
    if (typeof hop !== 'string' || ceiling === undefined || signature === undefined)
      throw new HopRefused('an incomplete forwarding header set');
    const [at, scopes] = splitCeiling(ceiling);
    const expected = this.sign(hop, ceiling, header(request, 'authorization') ?? '');
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw new HopRefused('a forwarding signature that does not verify');
    if (!Number.isFinite(at) || Math.abs(Date.now() - at) > HOP_TTL_MS) throw new HopRefused('an expired forwarding');
    const families = this.o.families();
    // A forwarder that allows everything here changes nothing (the credential keeps its own scopes).
    if (families.every((f) => mayWrite(scopes, f))) return principal;
    return { ...principal, scopes: intersectScopes(principal.scopes, scopes, families) };
  }

  /**
   * Forward the request when another process owns the principal's vault: true when this call answered
   * it (forwarded, or refused once no owner appeared in time), false when this process serves it itself.
   * While a vault changes owner (a failover) the request waits for the new one instead of failing.
   */
  async maybeForward(request: FastifyRequest, reply: FastifyReply, principal: Principal): Promise<boolean> {
    const vaultId = principal.vaultId;
    if (this.o.leases.owns(vaultId)) return false;
    const started = performance.now();
    // A request that already crossed one hop is never sent on: ownership moved while it travelled, and
    // the process that forwarded it looks the owner up again.
    if (request.headers[HOP_HEADER] !== undefined) {
      noOwner(reply, false, true);
      return true;
    }
    reply.hijack();
    let body: Buffer | undefined;
    try {
      body = await readBody(request, this.o.bodyLimitBytes);
    } catch {
      rawError(reply, 413, 'Request body too large');
      return true;
    }
    // The client may give up while the request waits for an owner (the request stream itself has ended).
    let gone = false;
    reply.raw.once('close', () => {
      gone = true;
    });
    const deadline = Date.now() + OWNER_WAIT_MS;
    for (let fresh = false; ; fresh = true) {
      const owner = await this.o.leases.ownerOf(vaultId, fresh);
      if (owner?.url) {
        const sent = await this.send(request, reply, owner.url, body, principal, started);
        if (sent === 'done') return true;
      }
      if (Date.now() > deadline || gone) break;
      await new Promise((r) => setTimeout(r, OWNER_POLL_MS));
    }
    this.counts.noOwner++;
    this.o.metrics?.forwarded((performance.now() - started) / 1000, 'no_owner');
    noOwner(reply, true);
    return true;
  }

  /**
   * One try at the owner. 'retry' when the request never reached a process that owns the vault
   * (connection refused, or the process answered that it no longer owns it): safe to send again.
   */
  private send(
    request: FastifyRequest,
    reply: FastifyReply,
    base: string,
    body: Buffer | undefined,
    principal: Principal,
    started: number,
  ): Promise<'done' | 'retry'> {
    const target = new URL(request.url, base);
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined || HOP_BY_HOP.has(name) || name.startsWith('x-exocortex-')) continue;
      if (name === 'content-length' || name === 'transfer-encoding') continue;
      headers[name] = value;
    }
    if (body) headers['content-length'] = String(body.length);
    // The owner learns the client's address from this process, never from what the client claimed.
    headers['x-forwarded-for'] = request.ip;
    const ceiling = `${Date.now()} ${this.o.ceiling().join(' ')}`;
    headers[HOP_HEADER] = this.o.leases.processId;
    headers[CEILING_HEADER] = ceiling;
    headers[SIGNATURE_HEADER] = this.sign(
      this.o.leases.processId,
      ceiling,
      header(request, 'authorization') ?? '',
    ).toString('base64url');
    return new Promise((resolve) => {
      const upstream = http.request(target, { method: request.method, headers, agent: this.agent }, (res) => {
        if (res.statusCode === 503 && res.headers[NOT_OWNER_HEADER]) {
          res.resume();
          void this.o.leases.ownerOf(principal.vaultId, true).catch(() => undefined);
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
          this.counts.forwarded++;
          this.o.metrics?.forwarded((performance.now() - started) / 1000, 'ok');
          resolve('done');
        });
        // The owner died mid-answer (a stream cut short). An SSE answer to one request ends with a JSON-RPC
        // error for its id, so the client learns the call failed (its outcome unknown) instead of waiting
        // for an answer that will not come; anything else is cut, never left hanging.
        res.on('close', () => {
          if (res.complete) return;
          this.counts.failed++;
          const id = requestId(body);
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
        void this.o.leases.ownerOf(principal.vaultId, true).catch(() => undefined);
        // Refused: nothing reached the owner (it died or has not started listening); try the next one.
        if (e.code === 'ECONNREFUSED') return resolve('retry');
        this.counts.failed++;
        this.o.metrics?.forwarded((performance.now() - started) / 1000, 'failed');
        this.o.log.warn({ vault: principal.vaultId, owner: base, err: e.message }, 'forward to the vault owner failed');
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
      upstream.end(body);
    });
  }

  private sign(hop: string, ceiling: string, authorization: string): Buffer {
    return createHmac('sha256', this.o.key).update(`${hop}\n${ceiling}\n${authorization}`).digest();
  }

  close(): void {
    this.agent.destroy();
  }
}

/** A hop that cannot be trusted: the caller refuses it 403 and never serves it. */
export class HopRefused extends Error {}

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function splitCeiling(ceiling: string): [number, Scope[]] {
  const [at, ...scopes] = ceiling.split(' ').filter(Boolean);
  return [Number(at), scopes];
}

/** The scopes both sets grant, per family: what a credential may do through a narrower deployment. */
export function intersectScopes(a: readonly Scope[], b: readonly Scope[], families: readonly string[]): Scope[] {
  const out: Scope[] = [];
  for (const f of families) {
    if (mayWrite(a, f) && mayWrite(b, f)) out.push(`${f}:write`);
    else if (mayRead(a, f) && mayRead(b, f)) out.push(`${f}:read`);
  }
  return out;
}

function noOwner(reply: FastifyReply, raw = false, notOwner = false): void {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    error: {
      code: -32000,
      message: "This vault's owner process is changing (failover); retry in a moment",
      data: { refusal: { code: 'vault_unavailable', retryable: true } },
    },
    id: null,
  });
  const headers = {
    'content-type': 'application/json',
    'retry-after': '1',
    ...(notOwner ? { [NOT_OWNER_HEADER]: '1' } : {}),
  };
  if (raw) {
    reply.raw.writeHead(503, headers);
    reply.raw.end(body);
    return;
  }
  void reply.code(503).headers(headers).send(body);
}

function rawError(reply: FastifyReply, status: number, message: string): void {
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

/** The request's body, whole (an MCP message is one JSON document), refused past `limit` bytes. */
function readBody(request: FastifyRequest, limit: number): Promise<Buffer | undefined> {
  if (request.method === 'GET' || request.method === 'DELETE' || request.method === 'HEAD')
    return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.raw.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        request.raw.destroy();
        reject(new Error('too large'));
      } else chunks.push(chunk);
    });
    request.raw.on('end', () => resolve(Buffer.concat(chunks)));
    request.raw.on('error', reject);
  });
}
