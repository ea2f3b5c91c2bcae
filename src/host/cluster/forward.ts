// Any process accepts any request: once the credential names its vault, a process that does not own the
// vault streams the raw HTTP request to the owner and the owner's answer back (SSE and listen streams
// included), and a client that goes away aborts the hop. The owner verifies the bearer again (the hop
// carries it untouched), so a forwarder can never widen what a credential may do; it can only narrow
// it: its own families and read-only switches travel as a scope ceiling, signed with the cluster's hop
// key (a secret in PostgreSQL), and the owner intersects the credential's scopes with it. A hop header
// without a valid signature is refused, so nothing from outside passes for a forwarder. Other vault-bound
// HTTP routes (transfer links, the panel's vault pages) go the same way once their own credential named
// the vault (`route`), their bodies streamed; the local operator of the admin channel (`exocortex stdio`)
// travels as a signed assertion, which only a process holding the database's hop key can make.
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
/** A hop asserting the local operator of the forwarding process's admin channel (`operator:<vault id>`). */
const AS_HEADER = 'x-exocortex-as';
/** The client's address as the forwarding process saw it (trusted only on a verified hop). */
const CLIENT_HEADER = 'x-exocortex-client';
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
/** The longest line of an operator command's answer relayed (a summary is a few KiB). */
const MAX_COMMAND_LINE = 1 << 20;
const NO_OWNER_MESSAGE = "This vault's owner process is changing (failover); retry in a moment";

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
  /** The local operator bound to a vault (what a hop from another process's admin channel asserts). */
  readonly operator: (vaultId: number) => Principal;
}

/** What a verified hop carries: the forwarder's scope ceiling, an asserted operator, the client's address. */
interface VerifiedHop {
  readonly scopes: Scope[];
  readonly operatorVault?: number;
  readonly client?: string;
}

/** How a routed request is checked at the owner: a write needs a write scope in the forwarder's ceiling. */
export interface RouteOptions {
  readonly write: boolean;
  /** The family whose write scope a write needs (else any family's). */
  readonly family?: string;
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
    const hop = this.verifyHop(request);
    if (!hop) return principal;
    const families = this.o.families();
    // A forwarder that allows everything here changes nothing (the credential keeps its own scopes).
    if (families.every((f) => mayWrite(hop.scopes, f))) return principal;
    return { ...principal, scopes: intersectScopes(principal.scopes, hop.scopes, families) };
  }

  /**
   * The local operator a verified hop asserts (another process's admin channel forwarded it), or
   * undefined for a request that asserts none; a hop that does not verify throws.
   */
  assertedOperator(request: FastifyRequest): Principal | undefined {
    if (request.headers[AS_HEADER] === undefined) return undefined;
    const vault = this.verifyHop(request)?.operatorVault;
    if (vault === undefined) throw new HopRefused('an operator assertion without a valid forwarding');
    return this.o.operator(vault);
  }

  /** The client's address: the socket peer's, or on a verified hop the address the forwarder saw. */
  clientAddress(request: FastifyRequest): string {
    try {
      return this.verifyHop(request)?.client ?? request.ip;
    } catch {
      return request.ip;
    }
  }

  /** The hop's signed headers, checked; undefined when the request came straight from a client. */
  private verifyHop(request: FastifyRequest): VerifiedHop | undefined {
    const hop = request.headers[HOP_HEADER];
    if (hop === undefined) return undefined;
    const ceiling = header(request, CEILING_HEADER);
    const signature = header(request, SIGNATURE_HEADER);
    if (typeof hop !== 'string' || ceiling === undefined || signature === undefined)
      throw new HopRefused('an incomplete forwarding header set');
    const [at, scopes] = splitCeiling(ceiling);
    const as = header(request, AS_HEADER) ?? '';
    const client = header(request, CLIENT_HEADER) ?? '';
    const expected = this.sign(hop, ceiling, credentialOf(request), as, client);
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw new HopRefused('a forwarding signature that does not verify');
    if (!Number.isFinite(at) || Math.abs(Date.now() - at) > HOP_TTL_MS) throw new HopRefused('an expired forwarding');
    const operator = /^operator:(\d{1,12})$/.exec(as);
    return { scopes, operatorVault: operator ? Number(operator[1]) : undefined, client: client || undefined };
  }

  /** Whether this process owns the vault now (a request for it is served here, not forwarded). */
  owns(vaultId: number): boolean {
    return this.o.leases.owns(vaultId);
  }

  /**
   * Route a vault-bound HTTP request (a transfer link, a panel page) whose own credential named `vaultId`:
   * false when this process serves it (it owns the vault, or the hop that brought it verifies and allows
   * it), true when this call answered it (streamed to the owner and back, or refused). A caller that gets
   * true returns without touching the reply.
   */
  async route(request: FastifyRequest, reply: FastifyReply, vaultId: number, opts: RouteOptions): Promise<boolean> {
    let hop: VerifiedHop | undefined;
    try {
      hop = this.verifyHop(request);
    } catch (e) {
      if (!(e instanceof HopRefused)) throw e;
      reply.hijack();
      rawError(reply, 403, `Forbidden: ${e.message}`);
      return true;
    }
    // The forwarding process's own configuration bounds what it may relay: no write through a read-only one.
    if (
      hop &&
      opts.write &&
      !hop.scopes.some((s) => (opts.family ? mayWrite([s], opts.family) : s.endsWith(':write')))
    ) {
      reply.hijack();
      rawError(reply, 403, 'Forbidden: the process this request came through is read-only for it');
      return true;
    }
    return this.forward(request, reply, vaultId, { stream: true });
  }

  /**
   * Forward the request when another process owns the principal's vault: true when this call answered
   * it (forwarded, or refused once no owner appeared in time), false when this process serves it itself.
   * While a vault changes owner (a failover) the request waits for the new one instead of failing.
   */
  async maybeForward(request: FastifyRequest, reply: FastifyReply, principal: Principal): Promise<boolean> {
    return this.forward(request, reply, principal.vaultId, {
      stream: false,
      operator: principal.kind === 'operator',
    });
  }

  /**
   * Send a command of this process's admin channel (its JSON body already parsed) to the owner of
   * `vaultId`, as the local operator, and stream the owner's answer back as the channel's NDJSON: true
   * when this call answered it, false when this process owns the vault and runs the command itself.
   */
  async operatorCommand(
    request: FastifyRequest,
    reply: FastifyReply,
    vaultId: number,
    body: unknown,
  ): Promise<boolean> {
    const res = reply.raw;
    const write = (line: Record<string, unknown>) => {
      if (!res.headersSent) {
        reply.hijack();
        res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      }
      if (!res.writableEnded) res.write(`${JSON.stringify(line)}\n`);
    };
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    if (!(await this.runOperatorCommand(vaultId, request.url, body, write, gone.signal))) return false;
    res.end();
    return true;
  }

  /**
   * Run an operator command (an admin-channel route the owner's HTTP listener answers for a verified hop
   * asserting its local operator, such as POST /v1/index) at the owner of `vaultId`, handing each line of
   * the owner's NDJSON answer to `onLine` as it arrives (progress, then {done} or {error}): false when
   * this process owns the vault (the caller runs the command itself), else true once an answer ended.
   * Whatever goes wrong on the way (no owner in time, a refused hop, the owner dying) arrives as one
   * {error} line, so a caller always learns how the command ended. The hop carries no credential of a
   * client: the signed operator assertion, bound to this vault, is what the owner checks.
   */
  async runOperatorCommand(
    vaultId: number,
    path: string,
    body: unknown,
    onLine: (line: Record<string, unknown>) => void,
    signal?: AbortSignal,
  ): Promise<boolean> {
    if (this.o.leases.owns(vaultId)) return false;
    const started = performance.now();
    const payload = Buffer.from(JSON.stringify(body ?? {}));
    const answered = await this.atOwner(
      vaultId,
      (base) => this.command(base, path, payload, vaultId, started, onLine, signal),
      () => signal?.aborted === true,
    );
    if (answered === 'owned') return false;
    if (answered === 'no_owner') {
      this.counts.noOwner++;
      this.o.metrics?.forwarded((performance.now() - started) / 1000, 'no_owner');
      onLine({ error: { code: 'vault_unavailable', message: NO_OWNER_MESSAGE, exitCode: 1 } });
    }
    return true;
  }

  /**
   * Try `attempt` at the vault's owner, looking the owner up again after each miss (a failover), until
   * it answered or OWNER_WAIT_MS passed ('no_owner'); 'owned' once this process took the vault over.
   */
  private async atOwner(
    vaultId: number,
    attempt: (base: string) => Promise<'done' | 'retry'>,
    gone: () => boolean,
  ): Promise<'done' | 'owned' | 'no_owner'> {
    const deadline = Date.now() + OWNER_WAIT_MS;
    for (let fresh = false; ; fresh = true) {
      if (this.o.leases.owns(vaultId)) return 'owned';
      // The reply may be hijacked: a throw from here on would leave the client waiting for an answer that
      // never comes. An owner lookup that fails (the database is restarting) counts as no owner yet.
      const owner = await this.o.leases.ownerOf(vaultId, fresh).catch(() => undefined);
      if (owner?.url && owner.owner !== this.o.leases.processId && (await attempt(owner.url)) === 'done') return 'done';
      if (Date.now() > deadline || gone()) return 'no_owner';
      await new Promise((r) => setTimeout(r, OWNER_POLL_MS));
    }
  }

  /** The signed headers of a hop from this process (`credential`: what credentialOf gives at the owner). */
  private hopHeaders(credential: string, as: string, client: string): http.OutgoingHttpHeaders {
    const ceiling = `${Date.now()} ${this.o.ceiling().join(' ')}`;
    const headers: http.OutgoingHttpHeaders = { [HOP_HEADER]: this.o.leases.processId, [CEILING_HEADER]: ceiling };
    if (as) headers[AS_HEADER] = as;
    if (client) headers[CLIENT_HEADER] = client;
    headers[SIGNATURE_HEADER] = this.sign(this.o.leases.processId, ceiling, credential, as, client).toString(
      'base64url',
    );
    return headers;
  }

  /** One try of an operator command at the owner; 'retry' when it never reached a process owning the vault. */
  private command(
    base: string,
    path: string,
    payload: Buffer,
    vaultId: number,
    started: number,
    onLine: (line: Record<string, unknown>) => void,
    signal: AbortSignal | undefined,
  ): Promise<'done' | 'retry'> {
    const target = new URL(path, base);
    const headers: http.OutgoingHttpHeaders = {
      host: target.host,
      'content-type': 'application/json',
      'content-length': String(payload.length),
      ...this.hopHeaders('\n', `operator:${vaultId}`, ''),
    };
    const failed = (message: string) => {
      this.counts.failed++;
      this.o.metrics?.forwarded((performance.now() - started) / 1000, 'failed');
      onLine({ error: { code: 'forward_failed', message, exitCode: 1 } });
    };
    return new Promise((resolve) => {
      let settled = false;
      const settle = (how: 'done' | 'retry') => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', abort);
        resolve(how);
      };
      const upstream = http.request(target, { method: 'POST', headers, agent: this.agent }, (res) => {
        if (res.statusCode === 503 && res.headers[NOT_OWNER_HEADER]) {
          res.resume();
          void this.o.leases.ownerOf(vaultId, true).catch(() => undefined);
          return settle('retry');
        }
        let buffered = '';
        let ended = false;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffered += chunk;
          if (res.statusCode !== 200) {
            if (buffered.length > MAX_COMMAND_LINE) res.destroy();
            return;
          }
          for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
            const line = buffered.slice(0, nl);
            buffered = buffered.slice(nl + 1);
            const event = parseLine(line);
            if (!event) continue;
            if ('done' in event || 'error' in event) ended = true;
            onLine(event);
          }
          // One line past the bound is not an answer of an admin command: cut it rather than buffer it.
          if (buffered.length > MAX_COMMAND_LINE) res.destroy();
        });
        res.on('end', () => {
          const last = res.statusCode === 200 ? parseLine(buffered) : undefined;
          if (last) {
            if ('done' in last || 'error' in last) ended = true;
            onLine(last);
          }
          if (res.statusCode !== 200)
            failed(`the vault owner refused the command (${res.statusCode}): ${errorText(buffered)}`);
          else if (!ended) failed('the vault owner process ended its answer before the command finished; run it again');
          else {
            this.counts.forwarded++;
            this.o.metrics?.forwarded((performance.now() - started) / 1000, 'ok');
          }
          settle('done');
        });
        res.on('close', () => {
          if (res.complete || settled) return;
          failed('The vault owner process failed while answering; run the command again');
          settle('done');
        });
        res.on('error', () => undefined);
      });
      const abort = () => upstream.destroy();
      signal?.addEventListener('abort', abort, { once: true });
      upstream.on('error', (e: NodeJS.ErrnoException) => {
        void this.o.leases.ownerOf(vaultId, true).catch(() => undefined);
        if (settled) return;
        // Refused: nothing reached the owner (it died or has not started listening); try the next one.
        if (e.code === 'ECONNREFUSED' && !signal?.aborted) return settle('retry');
        this.o.log.warn({ vault: vaultId, owner: base, err: e.message }, 'operator command at the vault owner failed');
        failed('The vault owner process failed while answering; run the command again');
        settle('done');
      });
      upstream.end(payload);
    });
  }

  private async forward(
    request: FastifyRequest,
    reply: FastifyReply,
    vaultId: number,
    opts: { stream: boolean; operator?: boolean },
  ): Promise<boolean> {
    if (this.o.leases.owns(vaultId)) return false;
    const started = performance.now();
    // A request that already crossed one hop is never sent on: ownership moved while it travelled, and
    // the process that forwarded it looks the owner up again.
    if (request.headers[HOP_HEADER] !== undefined) {
      reply.hijack();
      noOwner(reply, true);
      return true;
    }
    reply.hijack();
    // An MCP message is one JSON document, read whole (a lost hop can be sent again); other routes'
    // bodies (an upload) are streamed through as they arrive.
    let body: Buffer | 'stream' | undefined;
    if (opts.stream) body = hasBody(request) ? 'stream' : undefined;
    else
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
    const answered = await this.atOwner(
      vaultId,
      (base) => this.send(request, reply, base, body, vaultId, started, opts.operator === true),
      () => gone,
    );
    if (answered === 'done') return true;
    // No owner in time, or this process took the vault over meanwhile: a retry is served right.
    this.counts.noOwner++;
    this.o.metrics?.forwarded((performance.now() - started) / 1000, 'no_owner');
    noOwner(reply);
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
    Object.assign(headers, this.hopHeaders(credentialOf(request), operator ? `operator:${vaultId}` : '', client));
    return new Promise((resolve) => {
      let streaming = false;
      const upstream = http.request(target, { method: request.method, headers, agent: this.agent }, (res) => {
        // A streamed body already went (in part) to the wrong process: its 503 is the client's answer.
        if (res.statusCode === 503 && res.headers[NOT_OWNER_HEADER] && body !== 'stream') {
          res.resume();
          void this.o.leases.ownerOf(vaultId, true).catch(() => undefined);
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
        void this.o.leases.ownerOf(vaultId, true).catch(() => undefined);
        // Refused: nothing reached the owner (it died or has not started listening); try the next one.
        if (e.code === 'ECONNREFUSED' && !streaming) return resolve('retry');
        this.counts.failed++;
        this.o.metrics?.forwarded((performance.now() - started) / 1000, 'failed');
        this.o.log.warn({ vault: vaultId, owner: base, err: e.message }, 'forward to the vault owner failed');
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

  private sign(hop: string, ceiling: string, credential: string, as: string, client: string): Buffer {
    return createHmac('sha256', this.o.key).update(`${hop}\n${ceiling}\n${credential}\n${as}\n${client}`).digest();
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

/** What a hop is bound to: the request's own credential (a bearer, or the panel's session cookie). */
function credentialOf(request: FastifyRequest): string {
  return `${header(request, 'authorization') ?? ''}\n${header(request, 'cookie') ?? ''}`;
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
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

function noOwner(reply: FastifyReply, notOwner = false): void {
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

function rawError(reply: FastifyReply, status: number, message: string): void {
  reply.raw.writeHead(status, { 'content-type': 'application/json' });
  reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/** One line of an operator command's NDJSON answer (undefined for a blank or malformed one). */
function parseLine(line: string): Record<string, unknown> | undefined {
  if (!line.trim()) return undefined;
  try {
    const v = JSON.parse(line) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The message of a refusal's JSON body ({error: {message}} or {error: "…"}), else its first 200 characters. */
function errorText(body: string): string {
  try {
    const e = (JSON.parse(body) as { error?: { message?: string } | string }).error;
    const m = typeof e === 'string' ? e : e?.message;
    if (m) return m;
  } catch {}
  return body.slice(0, 200);
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
