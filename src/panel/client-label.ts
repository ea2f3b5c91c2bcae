// How the panel names an OAuth client: three clients registered as "Claude" must be told apart, so a
// client is its registered name with its redirect host(s) and registration date, never the id alone.
// Pure; the id stays available to the page as a title.
import type { ClientView } from '../host/admin/oauth-operations.js';

/** The hosts a client's redirect URIs point at, in order, without repeats (unparsable ones as given). */
export function redirectHosts(c: Pick<ClientView, 'redirectUris'>): string[] {
  const hosts = c.redirectUris.map((u) => {
    try {
      return new URL(u).host || u;
    } catch {
      return u;
    }
  });
  return [...new Set(hosts)];
}

/** "Claude — claude.ai, registered 2026-12-01", or for a metadata-document client its document's host. */
export function clientLabel(c: ClientView | undefined, clientId: string): string {
  if (!c) return clientId;
  const hosts =
    c.registration === 'metadata-document' ? redirectHosts({ redirectUris: [c.clientId] }) : redirectHosts(c);
  const parts = [
    hosts.length ? hosts.join(', ') : undefined,
    c.createdAt ? `registered ${c.createdAt.slice(0, 10)}` : undefined,
  ].filter(Boolean);
  return parts.length ? `${c.name} — ${parts.join(', ')}` : c.name;
}
