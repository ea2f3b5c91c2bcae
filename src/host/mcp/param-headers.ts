// SEP-2243 (2026-07-28): a tool argument whose schema carries `x-mcp-header: Name` is mirrored by the
// client into an `Mcp-Param-Name` header, which the server must check against the body before the call
// runs. The SDK does this only for its high-level McpServer, so the host does it for family tools. Pure.

/** The JSON-RPC code of a header that disagrees with the body (HeaderMismatch). */
export const HEADER_MISMATCH = -32020;

interface Declaration {
  readonly header: string;
  readonly path: readonly string[];
  readonly numeric: boolean;
}

/** Every `x-mcp-header` declared on a property (nested objects included) of an input schema. */
export function paramHeaderDeclarations(schema: unknown, path: readonly string[] = []): Declaration[] {
  const props = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  if (!props || typeof props !== 'object') return [];
  const out: Declaration[] = [];
  for (const [name, prop] of Object.entries(props)) {
    const p = prop as { 'x-mcp-header'?: unknown; type?: unknown } | null;
    if (!p || typeof p !== 'object') continue;
    if (typeof p['x-mcp-header'] === 'string')
      out.push({
        header: `mcp-param-${p['x-mcp-header'].toLowerCase()}`,
        path: [...path, name],
        numeric: p.type === 'integer' || p.type === 'number',
      });
    out.push(...paramHeaderDeclarations(p, [...path, name]));
  }
  return out;
}

const DECIMAL = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A header value as text: `=?base64?…?=` decoded (undefined when not canonical base64 UTF-8), anything else literal. */
export function decodeParamHeader(value: string): string | undefined {
  if (!(value.startsWith('=?base64?') && value.endsWith('?=') && value.length >= 11)) return value;
  const b64 = value.slice(9, -2);
  if (!BASE64.test(b64)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(b64, 'base64'));
  } catch {
    return undefined;
  }
}

function primitiveText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/**
 * Why the headers disagree with the arguments, or undefined when they agree. An argument that is
 * present needs its header, decoding to the same value; an absent or null one expects none.
 */
export function paramHeaderMismatch(
  schema: unknown,
  args: unknown,
  header: (name: string) => string | undefined,
): string | undefined {
  for (const d of paramHeaderDeclarations(schema)) {
    let value: unknown = args;
    for (const key of d.path)
      value = value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
    const body = primitiveText(value);
    if (body === undefined) continue;
    const raw = header(d.header);
    const name = d.path.join('.');
    if (raw === undefined) return `the arguments carry ${name} but the ${d.header} header is absent`;
    const decoded = decodeParamHeader(raw);
    if (decoded === undefined) return `the ${d.header} header is not valid base64 UTF-8`;
    const same =
      d.numeric && typeof value === 'number' && DECIMAL.test(decoded) ? Number(decoded) === value : decoded === body;
    if (!same)
      return `the ${d.header} header says ${JSON.stringify(decoded)} but the arguments carry ${name}=${JSON.stringify(value)}`;
  }
  return undefined;
}
