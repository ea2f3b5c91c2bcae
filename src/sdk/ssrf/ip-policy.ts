// Which IP addresses an import may connect to: only globally routable unicast. Embedded IPv4 (mapped,
// compatible, 6to4, NAT64, Teredo) is unwrapped and judged too. Pure; never resolves or connects.
import ipaddr from 'ipaddr.js';

type V4 = ipaddr.IPv4;
type V6 = ipaddr.IPv6;

const V4_DENY: ReadonlyArray<readonly [string, string]> = [
  ['0.0.0.0/8', '"this network" (0.0.0.0/8)'],
  ['10.0.0.0/8', 'private network (10.0.0.0/8)'],
  ['100.64.0.0/10', 'carrier-grade NAT (100.64.0.0/10)'],
  ['127.0.0.0/8', 'loopback (127.0.0.0/8)'],
  ['169.254.0.0/16', 'link-local / cloud metadata (169.254.0.0/16)'],
  ['172.16.0.0/12', 'private network (172.16.0.0/12)'],
  ['192.0.0.0/24', 'IETF protocol assignments (192.0.0.0/24)'],
  ['192.0.2.0/24', 'documentation range (192.0.2.0/24)'],
  ['192.88.99.0/24', '6to4 relay anycast (192.88.99.0/24)'],
  ['192.168.0.0/16', 'private network (192.168.0.0/16)'],
  ['198.18.0.0/15', 'benchmarking range (198.18.0.0/15)'],
  ['198.51.100.0/24', 'documentation range (198.51.100.0/24)'],
  ['203.0.113.0/24', 'documentation range (203.0.113.0/24)'],
  ['224.0.0.0/4', 'multicast (224.0.0.0/4)'],
  ['240.0.0.0/4', 'reserved (240.0.0.0/4, incl. broadcast)'],
];

const V6_DENY: ReadonlyArray<readonly [string, string]> = [
  ['::/128', 'the unspecified address (::)'],
  ['::1/128', 'loopback (::1)'],
  ['100::/64', 'discard-only range (100::/64)'],
  ['2001:db8::/32', 'documentation range (2001:db8::/32)'],
  ['2001::/23', 'IETF protocol assignments (2001::/23)'],
  ['64:ff9b:1::/48', 'local-use NAT64 (64:ff9b:1::/48)'],
  ['fc00::/7', 'unique local addresses (fc00::/7)'],
  ['fe80::/10', 'link-local (fe80::/10)'],
  ['fec0::/10', 'site-local (fec0::/10)'],
  ['ff00::/8', 'multicast (ff00::/8)'],
];

const v4Deny = V4_DENY.map(([cidr, rule]) => ({ range: ipaddr.IPv4.parseCIDR(cidr), rule }));
const v6Deny = V6_DENY.map(([cidr, rule]) => ({ range: ipaddr.IPv6.parseCIDR(cidr), rule }));
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');

export interface IpPolicy {
  /** Test-only: permit exactly 127.0.0.1 and ::1 (loopback test servers). Never set from configuration. */
  readonly allowLoopbackForTests?: boolean;
}

function v4FromBytes(b: number[]): V4 {
  return new ipaddr.IPv4([b[0], b[1], b[2], b[3]]);
}

function judgeV4(a: V4): string | undefined {
  for (const d of v4Deny) if (a.match(d.range)) return d.rule;
  return a.range() === 'unicast' ? undefined : `not globally routable (${a.range()})`;
}

/** IPv4 carried inside an IPv6 address, with the form's name, or undefined. */
function embeddedV4(a: V6): { v4: V4; form: string } | undefined {
  const b = a.toByteArray();
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return { v4: v4FromBytes(b.slice(12)), form: 'IPv4-mapped' };
  if (zero(0, 12) && !(b[12] === 0 && b[13] === 0 && b[14] === 0 && b[15] <= 1))
    return { v4: v4FromBytes(b.slice(12)), form: 'IPv4-compatible' };
  if (b[0] === 0x20 && b[1] === 0x02) return { v4: v4FromBytes(b.slice(2, 6)), form: '6to4' };
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(4, 12))
    return { v4: v4FromBytes(b.slice(12)), form: 'NAT64' };
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0)
    return { v4: v4FromBytes(b.slice(12).map((x) => x ^ 0xff)), form: 'Teredo' };
  return undefined;
}

function isLoopback(a: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  return a.kind() === 'ipv4' ? a.toString() === '127.0.0.1' : a.toNormalizedString() === '0:0:0:0:0:0:0:1';
}

/**
 * Why `address` must not be connected to, or undefined when it is a global unicast address.
 * Accepts canonical and odd spellings (ipaddr.js parsing), strips IPv6 brackets and zone ids are refused.
 */
export function deniedAddressRule(address: string, policy: IpPolicy = {}): string | undefined {
  let text = address.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  if (text.includes('%')) return 'an IPv6 zone id';
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.IPv6.isValid(text) ? ipaddr.IPv6.parse(text) : ipaddr.IPv4.parse(text);
  } catch {
    return 'not an IP address';
  }
  if (policy.allowLoopbackForTests && isLoopback(parsed)) return undefined;
  if (parsed.kind() === 'ipv4') return judgeV4(parsed as V4);
  const v6 = parsed as V6;
  const inner = embeddedV4(v6);
  if (inner) {
    if (inner.form === 'Teredo') return 'Teredo tunnel address (2001::/32)';
    const rule = judgeV4(inner.v4);
    if (policy.allowLoopbackForTests && inner.v4.toString() === '127.0.0.1')
      return `${inner.form} address (loopback is allowed only as 127.0.0.1 or ::1)`;
    return rule ? `${inner.form} address embedding ${inner.v4.toString()}: ${rule}` : undefined;
  }
  for (const d of v6Deny) if (v6.match(d.range)) return d.rule;
  if (!v6.match(GLOBAL_UNICAST)) return 'not globally routable IPv6 (outside 2000::/3)';
  return undefined;
}

/** Whether a string is an IP literal (either family, brackets allowed). */
export function isIpLiteral(text: string): boolean {
  const t = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  return ipaddr.IPv6.isValid(t) || ipaddr.IPv4.isValidFourPartDecimal(t);
}
