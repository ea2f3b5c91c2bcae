// Host settings, section `server`: The HTTP listener: address, port, TLS, hosts and origins allowed.
import { z } from 'zod';
import { port } from './common.js';
import { section } from './section.js';

export const serverSection = section(
  'restart',
  z
    .object({
      host: z
        .string()
        .min(1)
        .default('127.0.0.1')
        .describe('Interface to bind. A non-loopback host requires server.publicUrl.'),
      port: port.default(3737).describe('TCP port to listen on (0 = any free port).'),
      publicUrl: z
        .url()
        .nullable()
        .default(null)
        .describe(
          'The https:// address clients reach this server at (behind a reverse proxy, say); its host and origin are allowed, and families and the CLI name it in links. null: loopback only.',
        ),
      mode: z
        .enum(['stateful', 'stateless'])
        .default('stateful')
        .describe(
          'For 2025-era clients. `stateful`: an initialize opens an MCP session (list_changed notifications, subscriptions, mid-call input requests), and a request without the session header is still served on its own; `stateless`: no sessions, every request stands alone. 2026-07-28 clients are session-free either way (subscriptions/listen).',
        ),
      bodyLimitBytes: z
        .number()
        .int()
        .min(1024)
        .default(4 * 1024 * 1024)
        .describe(
          'Largest HTTP request body accepted; bigger ones get a JSON-RPC 413. Raised automatically to what an enabled family needs (e.g. files.maxWriteBytes as base64).',
        ),
      allowedHosts: z
        .array(z.string().min(1))
        .default([])
        .describe(
          "Extra `Host` header values accepted (DNS-rebinding protection allows loopback names and publicUrl's host by default).",
        ),
      allowedOrigins: z
        .array(z.string().min(1))
        .default([])
        .describe('Extra browser `Origin` values accepted (loopback origins and publicUrl are allowed by default).'),
      maxSessions: z
        .number()
        .int()
        .min(1)
        .default(1000)
        .describe('Most stateful MCP sessions open at once; a new session beyond it is answered 503.'),
      sessionIdleMinutes: z
        .number()
        .int()
        .min(1)
        .default(60)
        .describe('A stateful session idle for this long is closed.'),
      maxSessionsPerCredential: z
        .number()
        .int()
        .min(1)
        .default(50)
        .describe(
          "Open stateful sessions and subscriptions/listen streams one credential may hold, counted together. At the cap (or at server.maxSessions) that credential's least recently used session with no request in flight is closed to make room; 503 when none is idle (listen streams are never closed to make room).",
        ),
      maxSubscriptionsPerSession: z
        .number()
        .int()
        .min(0)
        .default(100)
        .describe('Distinct resource URIs one session may subscribe to; more are refused as too_many_subscriptions.'),
      maxListenStreams: z
        .number()
        .int()
        .min(1)
        .default(1000)
        .describe(
          'Open subscriptions/listen streams (2026-07-28 clients) the server holds at once; a new one beyond it is refused.',
        ),
      unauthenticatedBodyLimitBytes: z
        .number()
        .int()
        .min(0)
        .default(16 * 1024)
        .describe(
          'Body bytes read from a request that carries no valid credential (MCP requests are refused from their headers, before any body byte is read).',
        ),
      requestTimeoutMs: z
        .number()
        .int()
        .min(1000)
        .default(60_000)
        .describe(
          'Time a client has to send a whole request (headers and body, uploads included); slower requests get 408 and the connection is closed.',
        ),
      headersTimeoutMs: z
        .number()
        .int()
        .min(1000)
        .default(10_000)
        .describe('Time a client has to send the request headers.'),
      keepAliveTimeoutMs: z
        .number()
        .int()
        .min(0)
        .default(5_000)
        .describe('How long an idle keep-alive connection stays open between requests.'),
      maxConnections: z
        .number()
        .int()
        .min(1)
        .default(1024)
        .describe('Open TCP connections at most; further connections are closed at once.'),
    })
    .strict()
    .prefault({})
    .describe('The HTTP listener and MCP transport.'),
);
