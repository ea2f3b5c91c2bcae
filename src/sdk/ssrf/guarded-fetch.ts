// Outbound fetches on a user's behalf (import_from_url, OAuth client metadata documents): vet the URL,
// resolve and vet EVERY DNS answer, connect only to the vetted address (undici with our own connect),
// re-vet each redirect hop, enforce deadline and byte cap. Never uses the global fetch, never trusts
// proxy env vars, never returns a partial body.
import net from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import { promises as dns } from 'node:dns';
import { Agent, request } from 'undici';
import { deniedAddressRule } from './ip-policy.js';
import { UrlRefusedError, vetUrl, type UrlPolicy, type VettedUrl } from './url-policy.js';

export interface DnsAnswer {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolve a host name to every address it has (the importer vets all of them). */
export type Resolver = (hostname: string) => Promise<DnsAnswer[]>;

export interface ConnectRequest {
  /** The vetted IP address: the only place a socket may go. */
  readonly address: string;
  readonly family: 4 | 6;
  readonly port: number;
  readonly tls: boolean;
  /** SNI and certificate name (absent for IP-literal URLs). */
  readonly servername?: string;
}

/** Open a (TLS) socket to exactly `address:port`, resolved when connected. */
export type Connector = (req: ConnectRequest) => Promise<Duplex>;

export const systemResolver: Resolver = async (hostname) => {
  const answers = await dns.lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

export function systemConnector(extraCa?: string): Connector {
  return (req) =>
    new Promise<Duplex>((resolve, reject) => {
      const socket = req.tls
        ? tls.connect({
            host: req.address,
            port: req.port,
            servername: req.servername,
            ALPNProtocols: ['http/1.1'],
            ...(extraCa ? { ca: extraCa } : {}),
          })
        : net.connect({ host: req.address, port: req.port });
      socket.once(req.tls ? 'secureConnect' : 'connect', () => {
        socket.removeListener('error', reject);
        resolve(socket);
      });
      socket.once('error', reject);
    });
}

export interface ImportLimits {
  readonly maxBytes: number;
  readonly timeoutMs: number;
  readonly maxRedirects: number;
  /** Told the bytes received so far and the declared length (when the server sent one). */
  readonly onBytes?: (received: number, total: number | undefined) => void;
}

export interface ImportDeps {
  readonly resolver: Resolver;
  readonly connector: Connector;
  readonly policy: UrlPolicy;
}

export interface Fetched {
  readonly bytes: Buffer;
  readonly finalUrl: string;
  readonly contentType: string | null;
  /** The answer's Cache-Control header, for callers that cache what they fetched. */
  readonly cacheControl: string | null;
  readonly redirects: number;
}

/** Why an import stopped; `kind` maps to a refusal code in the tool. */
export class ImportError extends Error {
  constructor(
    readonly kind: 'refused' | 'failed' | 'too_large',
    message: string,
    readonly host: string | null,
    readonly size?: number,
  ) {
    super(message);
    this.name = 'ImportError';
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Resolve the target's addresses and vet every one; any denied answer refuses the whole host. */
export async function vettedAddress(target: VettedUrl, deps: ImportDeps): Promise<DnsAnswer> {
  if (target.ip) return { address: target.ip, family: target.ip.includes(':') ? 6 : 4 };
  let answers: DnsAnswer[];
  try {
    answers = await deps.resolver(target.host);
  } catch (e) {
    throw new ImportError(
      'failed',
      `the name ${target.host} does not resolve (${(e as { code?: string }).code ?? 'lookup failed'})`,
      target.host,
    );
  }
  if (answers.length === 0) throw new ImportError('failed', `the name ${target.host} has no addresses`, target.host);
  for (const a of answers) {
    const rule = deniedAddressRule(a.address, deps.policy);
    if (rule)
      throw new ImportError(
        'refused',
        `${target.host} resolves to ${a.address}, which is ${rule} (every DNS answer must be public)`,
        target.host,
      );
  }
  return answers[0];
}

function pinnedAgent(target: VettedUrl, pinned: DnsAnswer, connector: Connector): Agent {
  return new Agent({
    allowH2: false,
    pipelining: 0,
    connections: 1,
    connect: (_opts, cb) => {
      connector({
        address: pinned.address,
        family: pinned.family,
        port: target.port,
        tls: target.tls,
        servername: target.ip ? undefined : target.host,
      }).then(
        (socket) => cb(null, socket as unknown as net.Socket),
        (err: Error) => cb(err, null),
      );
    },
  });
}

async function readCapped(
  body: AsyncIterable<Buffer>,
  maxBytes: number,
  host: string,
  onBytes?: (received: number) => void,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    if (total > maxBytes) throw new ImportError('too_large', `the body passed ${maxBytes} bytes`, host, total);
    chunks.push(chunk);
    onBytes?.(total);
  }
  return Buffer.concat(chunks, total);
}

/** Fetch `raw` into memory under every rule above. Throws ImportError (or UrlRefusedError as 'refused'). */
export async function fetchUrl(
  raw: string,
  deps: ImportDeps,
  limits: ImportLimits,
  signal?: AbortSignal,
): Promise<Fetched> {
  const deadline = AbortSignal.timeout(limits.timeoutMs);
  const abort = signal ? AbortSignal.any([deadline, signal]) : deadline;
  let current = raw;
  for (let hop = 0; ; hop++) {
    let target: VettedUrl;
    try {
      target = vetUrl(current, deps.policy);
    } catch (e) {
      if (e instanceof UrlRefusedError)
        throw new ImportError('refused', hop > 0 ? `redirect ${hop} to a refused URL: ${e.rule}` : e.rule, e.host);
      throw e;
    }
    const pinned = await vettedAddress(target, deps).catch((e: unknown) => {
      if (e instanceof ImportError && e.kind === 'refused' && hop > 0)
        throw new ImportError('refused', `redirect ${hop} to a refused URL: ${e.message}`, e.host);
      throw e;
    });
    const agent = pinnedAgent(target, pinned, deps.connector);
    try {
      let res: Awaited<ReturnType<typeof request>>;
      try {
        res = await request(target.url.href, {
          dispatcher: agent,
          method: 'GET',
          headers: { 'user-agent': 'exocortex-import/1', accept: '*/*', 'accept-encoding': 'identity' },
          signal: abort,
          maxRedirections: 0,
          headersTimeout: limits.timeoutMs,
          bodyTimeout: limits.timeoutMs,
        });
      } catch (e) {
        throw failure(e, abort, deadline, limits, target.host);
      }
      if (REDIRECTS.has(res.statusCode)) {
        await res.body.dump().catch(() => undefined);
        const location = res.headers.location;
        if (typeof location !== 'string' || location === '')
          throw new ImportError('failed', `HTTP ${res.statusCode} without a Location header`, target.host);
        if (hop + 1 > limits.maxRedirects)
          throw new ImportError('refused', `more than ${limits.maxRedirects} redirects`, target.host);
        current = nextHop(location, target.url);
        continue;
      }
      if (res.statusCode !== 200) {
        await res.body.dump().catch(() => undefined);
        throw new ImportError('failed', `the server answered HTTP ${res.statusCode}`, target.host);
      }
      const declared = Number(res.headers['content-length'] ?? NaN);
      if (Number.isFinite(declared) && declared > limits.maxBytes) {
        discard(res.body);
        throw new ImportError('too_large', `the server announced ${declared} bytes`, target.host, declared);
      }
      let bytes: Buffer;
      try {
        const length = Number.isFinite(declared) && declared > 0 ? declared : undefined;
        bytes = await readCapped(
          res.body,
          limits.maxBytes,
          target.host,
          limits.onBytes && ((n) => limits.onBytes!(n, length)),
        );
      } catch (e) {
        discard(res.body);
        if (e instanceof ImportError) throw e;
        throw failure(e, abort, deadline, limits, target.host);
      }
      const ct = res.headers['content-type'];
      const cc = res.headers['cache-control'];
      return {
        bytes,
        finalUrl: target.url.href,
        contentType: typeof ct === 'string' ? ct : null,
        cacheControl: typeof cc === 'string' ? cc : null,
        redirects: hop,
      };
    } finally {
      void agent.close().catch(() => undefined);
    }
  }
}

function discard(body: { on(event: 'error', fn: () => void): unknown; destroy(): unknown }): void {
  body.on('error', () => undefined);
  body.destroy();
}

/**
 * The next URL to vet. An absolute or scheme-relative Location is vetted as the server spelled it (so
 * numeric and Unicode host spellings are judged raw, not after URL normalisation); a path keeps the host.
 */
export function nextHop(location: string, base: URL): string {
  const loc = location.trim();
  if (/^[a-z][a-z0-9+.-]*:/i.test(loc)) return loc;
  if (/^[\\/]{2}/.test(loc)) return `${base.protocol}${loc}`;
  return new URL(loc, base).href;
}

function failure(
  e: unknown,
  abort: AbortSignal,
  deadline: AbortSignal,
  limits: ImportLimits,
  host: string,
): ImportError {
  if (e instanceof ImportError) return e;
  if (deadline.aborted)
    return new ImportError(
      'failed',
      `the ${Math.round(limits.timeoutMs / 1000)} s deadline passed before the whole body arrived`,
      host,
    );
  if (abort.aborted) return new ImportError('failed', 'the call was cancelled', host);
  const err = e as { code?: string; message?: string };
  return new ImportError('failed', `${err.code ?? 'network error'}: ${(err.message ?? '').slice(0, 200)}`, host);
}
