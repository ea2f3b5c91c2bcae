// Who may read /metrics. Apart from the metrics themselves, so the HTTP app can check a scrape without
// loading prom-client when metrics are off; holds no state.
import { timingSafeEqual } from 'node:crypto';

/** Who may scrape: a bearer secret (compared in constant time), or a loopback peer when allowed. */
export function mayScrape(
  o: { token: string; allowLoopback: boolean },
  authorization: string | undefined,
  peer: string | undefined,
  forwarded: boolean,
): boolean {
  if (o.token) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (m) {
      const given = Buffer.from(m[1]);
      const want = Buffer.from(o.token);
      if (given.length === want.length && timingSafeEqual(given, want)) return true;
    }
  }
  // A loopback peer that forwards for someone (a reverse proxy) is not a local scraper.
  return o.allowLoopback && !forwarded && (peer === '127.0.0.1' || peer === '::1' || peer === '::ffff:127.0.0.1');
}
