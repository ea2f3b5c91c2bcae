// Host settings, section `oauth`: OAuth: the resource side and the authorization server.
import { z } from 'zod';
import { section } from './section.js';

export const oauthSection = section(
  'restart',
  z
    .object({
      enabled: z
        .boolean()
        .default(true)
        .describe(
          'Offer the embedded OAuth 2.1 authorization server (sign-in, consent, DCR, client metadata documents) and accept its access tokens beside API keys. Offered only when server.publicUrl is set; it must be https (a loopback http address is allowed).',
        ),
      accessTokenTtlSeconds: z
        .number()
        .int()
        .min(60)
        .max(86_400)
        .default(3600)
        .describe('Lifetime of an OAuth access token.'),
      refreshTokenTtlSeconds: z
        .number()
        .int()
        .min(3600)
        .default(30 * 86_400)
        .describe(
          'Lifetime of an OAuth refresh token; every refresh rotates it and starts the lifetime again (sliding). A replayed refresh token revokes its whole grant.',
        ),
      allowedRedirectHosts: z
        .array(z.string().min(1))
        .default([])
        .describe(
          'Host names a client may redirect to (exact, lower case; e.g. claude.ai, chatgpt.com). Empty: any https host, plus loopback for native clients. Loopback redirects are allowed either way.',
        ),
      allowedClientMetadataHosts: z
        .array(z.string().min(1))
        .default([])
        .describe(
          'Host names whose https Client ID Metadata Documents may be fetched. Empty: any public host (the fetch follows the same SSRF rules as import_from_url).',
        ),
      clientMetadataMaxBytes: z
        .number()
        .int()
        .min(512)
        .max(1_048_576)
        .default(16 * 1024)
        .describe('Largest Client ID Metadata Document fetched; a bigger one refuses the client.'),
      clientMetadataTimeoutMs: z
        .number()
        .int()
        .min(100)
        .max(30_000)
        .default(3000)
        .describe('Deadline of one Client ID Metadata Document fetch.'),
      signInFailures: z
        .number()
        .int()
        .min(1)
        .default(10)
        .describe(
          'Failed sign-ins one address may make per oauth.signInWindowSeconds; beyond it sign-in answers 429 with Retry-After.',
        ),
      signInWindowSeconds: z.number().int().min(1).default(900).describe('The window of oauth.signInFailures.'),
      registrationsPerHour: z
        .number()
        .int()
        .min(1)
        .default(20)
        .describe(
          'Dynamic client registrations (POST /register) one address may make per hour; beyond it /register answers 429 with Retry-After, so an anonymous caller cannot fill the database with clients.',
        ),
      signInLinkTtlSeconds: z
        .number()
        .int()
        .min(60)
        .max(86_400)
        .default(900)
        .describe('How long a one-time sign-in link from `exocortex users login-link` stays usable.'),
    })
    .strict()
    .prefault({})
    .describe(
      'The embedded OAuth 2.1 authorization server, for remote connectors (claude.ai, ChatGPT) that connect only with OAuth.',
    ),
);
