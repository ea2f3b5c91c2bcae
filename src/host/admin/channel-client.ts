// The CLI's side of the admin channel: finds the process that owns the database, checks that its socket
// is the operator's own (owner uid, mode 0600) before sending a byte, and calls its routes. Plain node:http
// over the socket (no undici): `exocortex stdio` relaying to the server loads nothing it does not use.
import { lstatSync } from 'node:fs';
import { Agent, request, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { ADMIN_PROTOCOL, type Hello } from './protocol.js';
import { OperationError } from './errors.js';

const BASE = 'http://exocortex.admin';

/** The socket exists but must not be trusted (someone else's, or open to others). Changes nothing. */
export class UnsafeSocketError extends Error {
  readonly code = 'unsafe_admin_socket';
}

export class AdminClient {
  private constructor(
    readonly socketPath: string,
    readonly hello: Hello,
    private readonly agent: Agent,
  ) {}

  /** The live owner behind socketPath, or undefined when nothing answers there. */
  static async connect(socketPath: string): Promise<AdminClient | undefined> {
    if (!trustedSocket(socketPath)) return undefined;
    const agent = new Agent({ keepAlive: true });
    let hello: Hello;
    try {
      const res = await send(socketPath, agent, 'GET', '/v1/hello', {});
      hello = JSON.parse(await text(res)) as Hello;
    } catch {
      agent.destroy();
      return undefined; // a dead owner's socket file: nobody to talk to
    }
    if (hello.protocol !== ADMIN_PROTOCOL) {
      agent.destroy();
      throw new OperationError(
        'protocol_mismatch',
        `the running server (PID ${hello.pid}, exocortex ${hello.version}) speaks admin protocol ${hello.protocol}, this CLI speaks ${ADMIN_PROTOCOL}: run the CLI of the same installation as the server`,
        2,
      );
    }
    return new AdminClient(socketPath, hello, agent);
  }

  async get<T>(path: string): Promise<T> {
    return this.call<T>('GET', path);
  }

  async post<T>(path: string, body: unknown): Promise<T> {
    return this.call<T>('POST', path, body);
  }

  /** A streamed command: each progress event to onEvent, then the final result. */
  async stream<T>(path: string, body: unknown, onEvent: (event: Record<string, unknown>) => void): Promise<T> {
    const res = await send(this.socketPath, this.agent, 'POST', path, {
      headers: this.headers(true),
      body: JSON.stringify(body),
    });
    if (res.statusCode !== 200) return failed(res);
    let buffered = '';
    let result: T | undefined;
    let error: { code: string; message: string; exitCode?: number } | undefined;
    for await (const chunk of res) {
      buffered += chunk.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (!line) continue;
        const event = JSON.parse(line) as Record<string, unknown>;
        if ('done' in event) result = event.done as T;
        else if ('error' in event) error = event.error as typeof error;
        else onEvent(event);
      }
    }
    if (error) throw new OperationError(error.code, error.message, error.exitCode ?? 1);
    if (result === undefined)
      throw new OperationError('internal', 'the server closed the admin stream before the command finished');
    return result;
  }

  async close(): Promise<void> {
    this.agent.destroy();
  }

  private headers(json: boolean): Record<string, string> {
    return {
      'x-exocortex-admin-protocol': String(ADMIN_PROTOCOL),
      ...(json ? { 'content-type': 'application/json' } : {}),
    };
  }

  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const res = await send(this.socketPath, this.agent, method, path, {
      headers: this.headers(body !== undefined),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if ((res.statusCode ?? 500) >= 400) return failed(res);
    return JSON.parse(await text(res)) as T;
  }
}

/**
 * Whether `socketPath` is a socket the operator may talk to: false when there is none; throws when there
 * is one that must not be trusted (not a socket, someone else's, or open to other users). Sends nothing.
 */
export function trustedSocket(socketPath: string): boolean {
  let st;
  try {
    st = lstatSync(socketPath);
  } catch {
    return false;
  }
  if (!st.isSocket())
    throw new UnsafeSocketError(`${socketPath} is not a socket; refusing to use it as the admin channel (remove it)`);
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid)
    throw new UnsafeSocketError(
      `the admin socket ${socketPath} belongs to uid ${st.uid}, not to you (uid ${uid}); refusing to use it`,
    );
  if ((st.mode & 0o077) !== 0)
    throw new UnsafeSocketError(
      `the admin socket ${socketPath} is open to other users (mode ${(st.mode & 0o777).toString(8)}); refusing to use it: restart the server, which recreates it as 0600`,
    );
  return true;
}

/** The admin channel's MCP endpoint, for a client whose fetch is socketFetch's. */
export const ADMIN_MCP_URL = new URL(`${BASE}/mcp`);

/**
 * A fetch that reaches the admin channel over the socket (for an MCP client transport): the request's
 * method, headers, string body and abort signal; the answer streamed as it arrives.
 */
export function socketFetch(socketPath: string, agent: Agent): typeof globalThis.fetch {
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const body = init.body ?? undefined;
    if (body !== undefined && typeof body !== 'string')
      throw new TypeError('the admin channel sends string bodies only');
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const res = await send(socketPath, agent, init.method ?? 'GET', url.pathname + url.search, {
      headers,
      body,
      signal: init.signal ?? undefined,
    });
    const answer = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) answer.append(name, v);
    }
    const status = res.statusCode ?? 502;
    const empty = status === 204 || status === 205 || status === 304 || init.method === 'HEAD';
    if (empty) res.resume();
    return new Response(empty ? null : (Readable.toWeb(res) as ReadableStream), {
      status,
      statusText: res.statusMessage,
      headers: answer,
    });
  }) as typeof globalThis.fetch;
}

/** One HTTP request over the socket; resolves with the answer's head, its body still to read. */
function send(
  socketPath: string,
  agent: Agent,
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: string; signal?: AbortSignal },
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    opts.signal?.throwIfAborted();
    const req = request({
      socketPath,
      agent,
      method,
      path,
      headers: { host: new URL(BASE).host, ...opts.headers },
      signal: opts.signal,
    });
    req.once('response', resolve);
    req.once('error', reject);
    req.end(opts.body);
  });
}

async function text(res: IncomingMessage): Promise<string> {
  let out = '';
  res.setEncoding('utf8');
  for await (const chunk of res) out += chunk;
  return out;
}

async function failed(res: IncomingMessage): Promise<never> {
  const body = await text(res);
  let err: { code?: string; message?: string; exitCode?: number } = {};
  try {
    err = (JSON.parse(body) as { error?: typeof err }).error ?? {};
  } catch {
    // not JSON: keep the status
  }
  throw new OperationError(
    err.code ?? 'internal',
    err.message ?? `admin channel answered HTTP ${res.statusCode}`,
    err.exitCode ?? 1,
  );
}
