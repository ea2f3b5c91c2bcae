// Which redirect URIs and client metadata URLs the authorization server accepts: https only, loopback
// http for native clients on any port, no credentials, no unspecified/broadcast/multicast address, and
// the operator's host allowlists. Pure; never resolves. The provider applies it to every registered
// redirect URI (DCR, metadata documents, stored clients), not only to the query parameter.
import ipaddr from 'ipaddr.js';

export interface RedirectPolicy {
  /** Allowed redirect host names; empty: any https host. */
  readonly allowedRedirectHosts: readonly string[];
  /** Allowed client metadata document hosts; empty: any (the SSRF rules still apply). */
  readonly allowedClientMetadataHosts: readonly string[];
}

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Why a redirect URI is refused, or undefined when it may receive codes. */
export function redirectUriProblem(raw: string, policy: RedirectPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'the redirect URI is not an absolute URL';
  }
  if (url.hash) return 'a redirect URI may not carry a fragment';
  if (url.username || url.password) return 'a redirect URI may not carry credentials';
  const literal = unroutableAddress(url.hostname);
  if (literal) return `a redirect URI may not name the ${literal} address ${url.hostname}`;
  if (url.protocol === 'http:') {
    // RFC 8252 §7.3: native clients listen on a loopback port of their choosing.
    return LOOPBACK.has(url.hostname)
      ? undefined
      : `plain http redirects are allowed only to loopback addresses (127.0.0.1, [::1]); ${url.hostname} needs https`;
  }
  if (url.protocol !== 'https:')
    return `the redirect URI scheme ${url.protocol.replace(/:$/, '')} is not allowed; use https (or a loopback http address for native clients)`;
  const host = url.hostname.toLowerCase();
  if (
    policy.allowedRedirectHosts.length &&
    !LOOPBACK.has(host) &&
    !policy.allowedRedirectHosts.map((h) => h.toLowerCase()).includes(host)
  ) {
    return `redirects to ${host} are not allowed here (oauth.allowedRedirectHosts)`;
  }
  return undefined;
}

/** Every redirect URI's problem, one line each (empty when all may receive codes). */
export function redirectUrisProblems(uris: readonly unknown[], policy: RedirectPolicy): string[] {
  return uris.flatMap((uri) => {
    if (typeof uri !== 'string') return [];
    const problem = redirectUriProblem(uri, policy);
    return problem ? [`${uri}: ${problem}`] : [];
  });
}

/** The kind of an IP literal no browser should be sent to (0.0.0.0, [::], broadcast, multicast), else undefined. */
function unroutableAddress(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (!ipaddr.isValid(bare)) return undefined;
  const parsed = ipaddr.process(bare);
  const range = parsed.range();
  return range === 'unspecified' || range === 'broadcast' || range === 'multicast' ? range : undefined;
}

/** Why a client_id metadata document URL may not be fetched (before the SSRF rules), or undefined. */
export function clientMetadataUrlProblem(raw: string, policy: RedirectPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'the client_id is not a URL';
  }
  if (url.protocol !== 'https:') return 'a client_id metadata document must be served over https';
  const host = url.hostname.toLowerCase();
  if (
    policy.allowedClientMetadataHosts.length &&
    !policy.allowedClientMetadataHosts.map((h) => h.toLowerCase()).includes(host)
  ) {
    return `client metadata documents from ${host} are not allowed here (oauth.allowedClientMetadataHosts)`;
  }
  return undefined;
}
