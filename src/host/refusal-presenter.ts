// One presenter for a refusal, whatever surface it leaves by. A `Refusal` (src/sdk/refusals.ts) is the one
// shape of an expected failure; this module is the only place that turns it into what a surface sends:
//   - a tool result: the sentence, then the one-line `MCP-REFUSAL {json}` contract, isError set;
//   - a JSON-RPC error (prompts, resources, the HTTP transport's own refusals): a message and
//     `data.refusal`, the same payload the contract line carries;
//   - an HTTP 401/403 body: that JSON-RPC error with the status a refusal of its kind takes;
//   - panel text: the sentence and the status of the page that shows it.
// The tool result also carries the refusal itself (under a symbol, so never on the wire), so that an
// in-process caller such as the panel reads the structured refusal instead of parsing the rendered text.
import { ProtocolErrorCode } from './mcp/sdk.js';
import { isRefusal, refusalLine, type Refusal } from '../sdk/refusals.js';
import type { ContentBlock } from '../sdk/types.js';

/** The payload of a refusal on every surface: `{ code, retryable, ...details }`, as the contract line has it. */
export function refusalPayload(refusal: Refusal): { code: string; retryable: boolean } & Record<string, unknown> {
  return JSON.parse(refusalLine(refusal).slice(refusalLine(refusal).indexOf('{')));
}

/** The sentence of a refusal on one line. */
export function refusalSentence(refusal: Refusal): string {
  return refusal.message.replace(/\r?\n/g, ' ').trim();
}

const REFUSAL = Symbol('exocortex.refusal');

export interface RefusalToolResult {
  [key: string]: unknown;
  content: ContentBlock[];
  isError: true;
  [REFUSAL]: Refusal;
}

/** A refusal as a tool result: the sentence, then the `MCP-REFUSAL {json}` line (docs/refusals.md). */
export function refusalToolResult(refusal: Refusal): RefusalToolResult {
  return {
    content: [{ type: 'text', text: `${refusalSentence(refusal)}\n${refusalLine(refusal)}` }],
    isError: true,
    [REFUSAL]: refusal,
  };
}

/** The refusal a tool result presents, when it is one the dispatcher made; undefined otherwise. */
export function refusalOfToolResult(result: unknown): Refusal | undefined {
  const r = (result as { [REFUSAL]?: Refusal } | null)?.[REFUSAL];
  return isRefusal(r) ? r : undefined;
}

export interface JsonRpcErrorBody {
  readonly code: number;
  readonly message: string;
  readonly data: { readonly refusal: Record<string, unknown> } & Record<string, unknown>;
}

/** JSON-RPC error codes of the HTTP transport's own refusals (credential and scope), as MCP clients read them. */
const UNAUTHORIZED = -32001;

/**
 * A refusal as a JSON-RPC error. An unknown resource or prompt and bad arguments are invalid params on every
 * protocol revision (the 2026-07-28 spec's MUST for a resource that does not exist, which also names its
 * uri); a missing or insufficient credential is the transport's -32001; anything else is an internal error.
 */
export function refusalJsonRpcError(refusal: Refusal, extra: Record<string, unknown> = {}): JsonRpcErrorBody {
  const code =
    refusal.code === 'unknown_resource' ||
    refusal.code === 'unknown_prompt' ||
    refusal.code === 'invalid_arguments' ||
    refusal.code === 'not_found'
      ? ProtocolErrorCode.InvalidParams
      : refusal.code === 'unauthenticated' || refusal.code === 'insufficient_scope' || refusal.code === 'forbidden'
        ? UNAUTHORIZED
        : ProtocolErrorCode.InternalError;
  const uri = refusal.code === 'unknown_resource' ? { uri: refusal.details.uri } : {};
  return { code, message: refusalSentence(refusal), data: { refusal: refusalPayload(refusal), ...uri, ...extra } };
}

/**
 * A refusal as an HTTP response body (a JSON-RPC error envelope) and its status: 401 when no valid
 * credential was presented (the client should authenticate), 403 when the credential is valid but may not
 * do this. Both bodies have the same shape, so a client reads one refusal whichever it got.
 */
export function refusalHttpResponse(
  refusal: Refusal,
  id: string | number | null = null,
): { status: 401 | 403; body: { jsonrpc: '2.0'; error: JsonRpcErrorBody; id: string | number | null } } {
  return {
    status: refusal.code === 'unauthenticated' ? 401 : 403,
    body: { jsonrpc: '2.0', error: refusalJsonRpcError(refusal), id },
  };
}

/** A refusal as panel text: the sentence, shown on a page with 404 for what does not exist, else 400. */
export function refusalPanelText(refusal: Refusal): { status: 400 | 404; text: string } {
  const missing = refusal.code === 'unknown_tool' || refusal.code === 'not_found';
  return { status: missing ? 404 : 400, text: refusalSentence(refusal) };
}
