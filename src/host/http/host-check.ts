// Which Host headers the HTTP listener serves (DNS rebinding protection): the header is parsed as the
// authority of an http URL by the WHATWG URL parser and must round-trip exactly (host, optional port,
// nothing else — no userinfo, no trailing junk after an IPv6 literal); then loopback names, the
// operator's server.allowedHosts and the public URL's host pass. Pure; never resolves a name.

const LOCAL_HOSTNAMES = new Set(['localhost', '127.0.0.1', '[::1]']);
/** Host headers that passed, remembered at most. */
const PASSED_CACHE = 64;

export interface ParsedHost {
  /** host[:port], lower-cased, exactly as sent. */
  readonly host: string;
  /** The host name alone (an IPv6 literal keeps its brackets). */
  readonly hostname: string;
}

/** The Host header's parts, or undefined when it is not exactly `host[:port]`. */
export function parseHostHeader(raw: string | undefined): ParsedHost | undefined {
  if (!raw || raw.length > 1024) return undefined;
  const host = raw.toLowerCase();
  let url: URL;
  try {
    url = new URL(`http://${host}`);
  } catch {
    return undefined;
  }
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return undefined;
  // The parser normalises (drops :80, rewrites 127.1 and IDNs): only a header already in canonical form passes.
  if (url.host !== host && `${url.host}:80` !== host) return undefined;
  return { host, hostname: url.hostname };
}

/** The Host check of one listener: loopback, server.allowedHosts (a name, or name:port) and the public URL's host. */
export function hostCheck(
  allowedHosts: readonly string[],
  publicUrl: string | null,
): (raw: string | undefined) => boolean {
  const allowed = new Set(allowedHosts.map((h) => h.toLowerCase()));
  const publicHost = publicUrl ? new URL(publicUrl).host : undefined;
  // Headers that passed, remembered (the check is pure): every request sends one of a few, and parsing it
  // as a URL was a measurable share of a small tool call. Bounded; a refused header is parsed each time.
  const passed = new Set<string>();
  return (raw) => {
    if (raw !== undefined && passed.has(raw)) return true;
    const parsed = parseHostHeader(raw);
    if (!parsed) return false;
    const ok =
      LOCAL_HOSTNAMES.has(parsed.hostname) ||
      allowed.has(parsed.host) ||
      allowed.has(parsed.hostname) ||
      parsed.host === publicHost;
    if (ok && passed.size < PASSED_CACHE) passed.add(raw!);
    return ok;
  };
}
