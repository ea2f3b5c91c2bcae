// A request and its reply on node's own HTTP objects, shaped like the parts of Fastify's that the MCP
// endpoint and the cluster forwarder use. The MCP endpoint is served on node's request path, without
// Fastify's (hooks, routing, content-type parsing: about a tenth of a small tool call, issue 38), while a
// Fastify route (a transfer link, a panel page) is still handed to the forwarder as it is.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import secureJson from 'secure-json-parse';

/** What the forwarder and the MCP endpoint read of a request; a FastifyRequest is one. */
export interface RequestView {
  readonly raw: IncomingMessage;
  readonly headers: IncomingHttpHeaders;
  readonly url: string;
  readonly method: string;
  /** The socket peer's address. */
  readonly ip: string;
}

/** What they do with a reply: answer on the raw response, having taken it over; a FastifyReply is one. */
export interface ReplyView {
  readonly raw: ServerResponse;
  hijack(): unknown;
}

/** A reply that answers with a status, headers and a JSON (or text) payload; a FastifyReply is one. */
export interface Answering {
  code(status: number): Answering;
  header(name: string, value: string): Answering;
  send(payload?: unknown): Answering;
}

export class NodeRequest implements RequestView {
  readonly headers: IncomingHttpHeaders;
  readonly url: string;
  readonly method: string;
  /** The parsed JSON body, once read (undefined for a request without one). */
  body: unknown = undefined;

  constructor(readonly raw: IncomingMessage) {
    this.headers = raw.headers;
    this.url = raw.url ?? '/';
    this.method = raw.method ?? 'GET';
  }

  get ip(): string {
    return this.raw.socket.remoteAddress ?? '';
  }
}

export class NodeReply implements ReplyView, Answering {
  private status = 200;

  constructor(readonly raw: ServerResponse) {}

  code(status: number): this {
    this.status = status;
    return this;
  }

  header(name: string, value: string): this {
    if (!this.raw.headersSent) this.raw.setHeader(name, value);
    return this;
  }

  /** Node's response is the reply already: nothing to take over. */
  hijack(): this {
    return this;
  }

  /** Answer with `payload`: a string as it is, anything else as JSON. A reply already answered is left alone. */
  send(payload?: unknown): this {
    if (this.raw.headersSent || this.raw.writableEnded) return this;
    const text = payload === undefined ? '' : typeof payload === 'string' ? payload : JSON.stringify(payload);
    if (typeof payload !== 'string' && !this.raw.hasHeader('content-type'))
      this.raw.setHeader('content-type', 'application/json; charset=utf-8');
    this.raw.statusCode = this.status;
    this.raw.end(text);
    return this;
  }
}

/** A body over the limit: the caller answers 413 and closes the connection. */
export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`request body over ${limit} bytes`);
  }
}

/** Whether the request says it carries a body (a length above zero, or chunks). */
export function hasBody(request: Pick<RequestView, 'headers'>): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * The request's body, read whole and at most `limit` bytes: a declared length over it is refused before a
 * byte is read, and a body that grows past it stops being read (BodyTooLarge either way).
 */
export function readBody(raw: IncomingMessage, limit: number): Promise<Buffer> {
  if (Number(raw.headers['content-length'] ?? 0) > limit) return Promise.reject(new BodyTooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      raw.off('data', onData);
      raw.pause();
      reject(new BodyTooLarge(limit));
    };
    raw.on('data', onData);
    raw.once('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    raw.once('error', reject);
    raw.once('close', () => {
      if (!raw.complete) reject(new Error('the request body did not arrive whole'));
    });
  });
}

/**
 * JSON as Fastify's own parser reads it: `__proto__` and `constructor.prototype` keys are refused (a
 * SyntaxError), so a body can never reach the code that reads it with a poisoned prototype.
 */
export function parseJsonBody(text: string): unknown {
  return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
}
