// Which URLs an import may fetch, judged before any connection: scheme, port, userinfo, host spelling
// (NFKC, Unicode dots, IDNA, numeric hosts, special-use names) and IP literals. Pure; never resolves.
import { domainToASCII } from 'node:url';
import { deniedAddressRule, type IpPolicy } from './ip-policy.js';

export interface UrlPolicy extends IpPolicy {
  readonly allowHttp: boolean;
  readonly maxUrlLength: number;
}

export interface VettedUrl {
  readonly url: URL;
  /** Lower-case ASCII host name (no brackets), or the canonical IP text. */
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  /** Set when the URL names an IP literal (no DNS step, no SNI). */
  readonly ip?: string;
}

export class UrlRefusedError extends Error {
  constructor(
    readonly rule: string,
    readonly host: string | null = null,
  ) {
    super(rule);
    this.name = 'UrlRefusedError';
  }
}

const PORTS: Record<string, readonly number[]> = { 'https:': [443, 8443], 'http:': [80, 8080] };
const UNICODE_DOTS = /[\u3002\uff0e\uff61]/g;
const SPECIAL_SUFFIXES = [
  '.localhost',
  '.local',
  '.internal',
  '.home.arpa',
  '.arpa',
  '.onion',
  '.invalid',
  '.test',
  '.example',
  '.lan',
  '.intranet',
  '.corp',
];
const LDH_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const NUMERIC_LABEL = /^(0x[0-9a-f]*|[0-9]+)$/i;

/** The authority part of a raw URL string, before WHATWG parsing normalises anything away. */
function rawAuthority(raw: string): string {
  const m = /^[a-z][a-z0-9+.-]*:(?:[/\\]{2})?([^/?#]*)/i.exec(raw.trim());
  return m ? m[1] : '';
}

function refuse(rule: string, host: string | null = null): never {
  throw new UrlRefusedError(rule, host);
}

/** Fold a host name the way the rules compare it: NFKC, Unicode dots → '.', no trailing dot, lower case. */
export function foldHost(host: string): string {
  return host.normalize('NFKC').replace(UNICODE_DOTS, '.').replace(/\.$/, '').toLowerCase();
}

/** Vet one absolute URL string (an import target or a redirect's resolved Location). */
export function vetUrl(raw: string, policy: UrlPolicy): VettedUrl {
  if (typeof raw !== 'string' || raw.length === 0) refuse('the URL is empty');
  if (raw.length > policy.maxUrlLength) refuse(`the URL is longer than ${policy.maxUrlLength} characters`);
  if (/[\u0000-\u001f\u007f]/.test(raw) || /\s/.test(raw.trim()))
    refuse('the URL contains whitespace or control characters');
  const authority = rawAuthority(raw);
  if (authority.includes('@')) refuse('credentials (userinfo "@") in the URL are not allowed');
  if (authority.includes('\\')) refuse('a backslash in the host part');
  if (authority.includes('%')) refuse('percent-encoding or an IPv6 zone id in the host');
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    refuse('the URL cannot be parsed (a malformed or numeric-looking host is refused)');
  }
  if (url.username || url.password) refuse('credentials (userinfo) in the URL are not allowed');
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    refuse(`the scheme "${url.protocol.replace(/:$/, '')}" is not allowed; use https`);
  if (url.protocol === 'http:' && !policy.allowHttp)
    refuse('plain http is not allowed (transfer.import.allowHttp is off); use https');
  const tls = url.protocol === 'https:';
  const port = url.port ? Number(url.port) : tls ? 443 : 80;
  if (!PORTS[url.protocol].includes(port))
    refuse(
      `port ${port} is not allowed for ${url.protocol.replace(/:$/, '')} (allowed: ${PORTS[url.protocol].join(', ')})`,
    );

  const parsedHost = url.hostname.replace(/\.$/, '');
  if (!parsedHost) refuse('the URL has no host');
  if (parsedHost.startsWith('[')) {
    const ip = parsedHost.slice(1, -1);
    const rule = deniedAddressRule(ip, policy);
    if (rule) refuse(`the address ${ip} is ${rule}`, ip);
    return { url, host: ip, port, tls, ip };
  }
  // The raw spelling, folded: catches numeric hosts WHATWG already rewrote to dotted IPv4.
  const rawHost = foldHost(authority.replace(/:[^:\]]*$/, '').replace(/^\[|\]$/g, ''));
  const labels = rawHost.split('.');
  const last = labels[labels.length - 1] ?? '';
  const dottedQuad = /^\d{1,3}(\.\d{1,3}){3}$/.test(parsedHost);
  if (dottedQuad) {
    const rule = deniedAddressRule(parsedHost, policy);
    if (rule) refuse(`the address ${parsedHost} (spelled "${rawHost}") is ${rule}`, parsedHost);
    if (rawHost !== parsedHost)
      refuse(`a numeric host spelling ("${rawHost}") is not allowed; write the dotted address`, parsedHost);
    return { url, host: parsedHost, port, tls, ip: parsedHost };
  }
  if (NUMERIC_LABEL.test(last)) refuse(`a numeric-looking last label ("${last}") is not allowed`, rawHost);

  const ascii = domainToASCII(rawHost);
  if (!ascii) refuse('the host is not a valid international domain name', rawHost);
  if (ascii !== parsedHost) refuse('the host spelling is ambiguous (IDNA disagreement)', rawHost);
  const parts = ascii.split('.');
  if (ascii === 'localhost' || ascii.endsWith('.localhost')) refuse('localhost names are not allowed', ascii);
  for (const suffix of SPECIAL_SUFFIXES)
    if (ascii.endsWith(suffix) || ascii === suffix.slice(1)) refuse(`names ending in ${suffix} are not public`, ascii);
  if (parts.length < 2) refuse('single-label host names are not allowed', ascii);
  for (const p of parts)
    if (!LDH_LABEL.test(p)) refuse(`the host label "${p}" is not letters, digits and hyphens`, ascii);
  return { url, host: ascii, port, tls };
}
