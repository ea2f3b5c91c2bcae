// The host's settings schema (zod): every key, its type and its default. Family-owned sections are
// validated by the loader against each family's own JSON Schema; this file never names a family's keys.

import { z } from 'zod';
import { DEFAULT_PGLITE_MEMORY } from '../db/engines/pglite-memory.js';

const port = z.number().int().min(0).max(65535);

/** User and vault names: what the CLI, keys and logs show; no spaces or slashes, so they need no quoting. */
export const ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$/;
const accountName = z
  .string()
  .regex(ACCOUNT_NAME, 'a name: letters, digits, . _ - (at most 80), starting with a letter or digit');

export const declaredVaultSchema = z
  .object({
    name: accountName.describe("The vault's name (what users are bound to and `exocortex vaults list` shows)."),
    path: z
      .string()
      .min(1)
      .describe(
        'Its root folder; it must exist. Relative paths resolve like vault.path. Roots may not overlap (one inside, equal to, or containing another, through symlinks and bind mounts).',
      ),
    shared: z
      .boolean()
      .default(false)
      .describe('Several users may be bound to it. Off by default: a second user on an unshared vault is refused.'),
  })
  .strict();

const limit = (what: string) => z.number().int().min(0).describe(what);

/** What each per-user limit means: one text for admission.perUser (the defaults) and a user's own `limits`. */
const LIMIT_TEXT = {
  callsPerMinute:
    'Rate bucket per user over all tool calls of all their credentials (0: only the per-credential bucket).',
  writesPerMinute:
    'Rate bucket per user over write-class calls of all their credentials (0: only the per-credential bucket).',
  read: 'Concurrent read-class calls one user may run (0: only the server-wide slots).',
  write: 'Concurrent write-class calls one user may run (0: only the server-wide slots).',
  expensive: 'Concurrent expensive-class calls one user may run (0: only the server-wide slots).',
  dailyQuota: 'Tool calls per user per day over all their credentials (0: unlimited).',
  sessions:
    'Open stateful MCP sessions and subscriptions/listen streams one user may hold over all their credentials, counted together (0: only the per-credential and server caps).',
} as const;

/** Limits over all of one user's credentials together (0 = no limit of that kind beyond the others). */
export const userLimitsSchema = z
  .object({
    callsPerMinute: limit(LIMIT_TEXT.callsPerMinute),
    writesPerMinute: limit(LIMIT_TEXT.writesPerMinute),
    concurrency: z
      .object({
        read: limit(LIMIT_TEXT.read),
        write: limit(LIMIT_TEXT.write),
        expensive: limit(LIMIT_TEXT.expensive),
      })
      .strict()
      .partial()
      .describe('Concurrency slots per user and admission class, taken before the server-wide ones.'),
    dailyQuota: limit(LIMIT_TEXT.dailyQuota),
    sessions: limit(LIMIT_TEXT.sessions),
  })
  .strict()
  .partial();

export type UserLimitsOverride = z.infer<typeof userLimitsSchema>;

export const declaredUserSchema = z
  .object({
    name: accountName.describe("The user's name (`keys create --user NAME`)."),
    vault: accountName.describe(
      'The vault the user is bound to: a `vaults` entry, vault.name, or a vault made with `exocortex vaults add`.',
    ),
    admin: z
      .boolean()
      .default(false)
      .describe(
        "Marks the user as an administrator: in the panel (/admin) they see every user's vaults, keys and usage and reach the danger zone (`exocortex users admin NAME [--off]` for users not declared here).",
      ),
    disabled: z.boolean().default(false).describe('Refuse every key of this user at once, without deleting them.'),
    limits: userLimitsSchema
      .optional()
      .describe("This user's own limits, each over the operator's admission.perUser default (same keys)."),
  })
  .strict();

export const familyToggleSchema = z
  .object({
    enabled: z
      .boolean()
      .default(true)
      .describe('Serve this family (false: its tools, prompts, resources and routes disappear).'),
    readOnly: z.boolean().default(false).describe("Hide and refuse this family's write tools."),
  })
  .strict();

export const hostSettingsSchema = z
  .object({
    vault: z
      .object({
        path: z
          .string()
          .min(1)
          .default('./vault')
          .describe(
            'The vault root folder (created, with a welcome note, when missing or empty). Relative paths resolve against the directory the server starts in; `~/` is the home directory.',
          ),
        name: z
          .string()
          .min(1)
          .max(80)
          .default('vault')
          .describe("The vault's name in the database and in the server's instructions to clients."),
        obsidianName: z
          .string()
          .min(1)
          .max(200)
          .nullable()
          .default(null)
          .describe(
            "The vault's name as Obsidian knows it; when set, results that name a note carry an `obsidian://open?vault=…&file=…` deep link. null: no deep links.",
          ),
        allowNamedStaging: z
          .boolean()
          .default(false)
          .describe(
            'Start on a filesystem without O_TMPFILE by staging writes under named dot-files instead (less safe against a crash mid-write).',
          ),
        readOnly: z
          .boolean()
          .default(false)
          .describe(
            "Serve the vault read-only: no write tool of any family is listed or runs, and every change to vault files (uploads included) is refused as vault_read_only. Family readOnly switches hide only that family's own write tools.",
          ),
        allowHardLinks: z
          .boolean()
          .default(false)
          .describe(
            'Serve, index and write files whose link count is above 1. Off by default: a hard link can make a file outside the vault readable and writable through it.',
          ),
        openWriterWaitMs: z
          .number()
          .int()
          .min(0)
          .max(10_000)
          .default(100)
          .describe(
            'How long a replace waits for another program (an editor writing in place, an appender) to close a note it holds open for writing before refusing with concurrent_write.',
          ),
      })
      .strict()
      .prefault({})
      .describe('The vault this server serves.'),
    server: z
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
    database: z
      .object({
        url: z
          .string()
          .regex(/^(pglite:|postgres:\/\/|postgresql:\/\/)/, 'must start with pglite:, postgres:// or postgresql://')
          .default('pglite:./data/db')
          .describe(
            '`pglite:<dir>` for the embedded database (`pglite:memory://` for a throwaway one), or `postgres://…` / `postgresql://…` for a PostgreSQL server.',
          ),
        poolSize: z
          .number()
          .int()
          .min(1)
          .max(100)
          .default(10)
          .describe('Connections to a PostgreSQL server (embedded PGlite always uses one).'),
        pgliteThread: z
          .boolean()
          .default(true)
          .describe(
            'Run embedded PGlite on its own worker thread so SQL never blocks the event loop; false runs it on the main thread (about 100 MiB less memory, slower answers while the index works).',
          ),
        pgliteMaintenanceSeconds: z
          .number()
          .int()
          .min(0)
          .max(3600)
          .default(15)
          .describe(
            "Seconds between the embedded database's maintenance passes, which do what a server's autovacuum would (PGlite runs none): ANALYZE each table once 50 rows plus 10 % of it changed (at most every 5 minutes unless it more than doubled), so the planner stops using plans made on empty tables; and merge the pending lists of the keyword index's GIN indexes. While rows are being written, due tables are also checked every 2 s between passes, so a table that grows fast (a first index) is analysed as it doubles. 0 turns it off; a PostgreSQL server ignores it.",
          ),
        pgliteSharedBuffersMb: z
          .number()
          .int()
          .min(1)
          .max(4096)
          .default(DEFAULT_PGLITE_MEMORY.sharedBuffersMb)
          .describe(
            "Embedded PGlite's shared_buffers, in MiB. Its memory only grows, so this is resident for good once used: 16 keeps an idle server about 110 MiB lighter than PGlite's own 128; raise it for vaults far past 10k notes on a machine with memory to spare.",
          ),
        pgliteWalBuffersKb: z
          .number()
          .int()
          .min(0)
          .max(262144)
          .refine((v) => v === 0 || v >= 64, 'pgliteWalBuffersKb is 0 (automatic) or at least 64')
          .default(DEFAULT_PGLITE_MEMORY.walBuffersKb)
          .describe("Embedded PGlite's wal_buffers, in KiB; 0: PostgreSQL's automatic 1/32 of the shared buffers."),
        pgliteWorkMemMb: z
          .number()
          .int()
          .min(1)
          .max(2048)
          .default(DEFAULT_PGLITE_MEMORY.workMemMb)
          .describe("Embedded PGlite's work_mem: memory one sort or hash may take before it spills to disk, in MiB."),
        pgliteMaintenanceWorkMemMb: z
          .number()
          .int()
          .min(1)
          .max(4096)
          .default(DEFAULT_PGLITE_MEMORY.maintenanceWorkMemMb)
          .describe(
            "Embedded PGlite's maintenance_work_mem (index builds, the keyword index's pending-list merges), in MiB; what it takes once stays resident.",
          ),
      })
      .strict()
      .prefault({})
      .describe('Where the index, credentials, OAuth state and usage logs are stored.'),
    cluster: z
      .object({
        ownVaults: z
          .boolean()
          .default(true)
          .describe(
            'Bid for vault leases. false: this process owns no vault and forwards every call to the owner, within its own families and read-only switches (a read-only search deployment).',
          ),
        internalUrl: z
          .string()
          .regex(/^https?:\/\/[^/?#@]+\/?$/, 'an http(s)://host:port base URL')
          .nullable()
          .default(null)
          .describe(
            "Where the other processes reach this one to forward a vault's calls (http://10.0.0.5:3000). null: the listen address, 127.0.0.1 when it listens on every interface.",
          ),
        leaseIntervalMs: z
          .number()
          .int()
          .min(100)
          .max(10_000)
          .default(500)
          .describe(
            'How often a process renews its presence and bids for vaults without an owner; a failed owner is replaced within about this long.',
          ),
      })
      .strict()
      .prefault({})
      .describe(
        'Several processes on one PostgreSQL server (ignored with embedded PGlite): each vault has one owner under a lease held in PostgreSQL; any process accepts any request and forwards it to the owner.',
      ),
    admin: z
      .object({
        socketPath: z
          .string()
          .min(1)
          .nullable()
          .default(null)
          .describe(
            'Path of the local admin socket the CLI and `exocortex stdio` use to reach the running server. null: inside the embedded database directory; a PostgreSQL deployment without a path has no admin channel.',
          ),
      })
      .strict()
      .prefault({})
      .describe('The local admin channel.'),
    auth: z
      .object({
        mintAdminKeyOnFirstStart: z
          .boolean()
          .default(true)
          .describe('Mint and print an admin API key at start when no active key exists.'),
        keyCacheSeconds: z
          .number()
          .min(0)
          .max(300)
          .default(2)
          .describe(
            'How long a verified API key is cached. Creating or revoking a key clears the cache at once (through the admin socket, or a NOTIFY on a shared PostgreSQL).',
          ),
      })
      .strict()
      .prefault({})
      .describe('API keys.'),
    metrics: z
      .object({
        enabled: z
          .boolean()
          .default(false)
          .describe('Serve Prometheus metrics at GET /metrics (off: /metrics answers 404).'),
        token: z
          .string()
          .default('')
          .refine((v) => v === '' || v.length >= 16, 'a metrics token is at least 16 characters')
          .describe(
            'Bearer secret a scraper sends (`Authorization: Bearer …`; set it through EXO_METRICS_TOKEN rather than the file). Empty: only loopback scrapes, if metrics.allowLoopback.',
          ),
        allowLoopback: z
          .boolean()
          .default(false)
          .describe(
            'Let a scraper on this machine (a loopback peer that forwards for no one) read /metrics without the token.',
          ),
      })
      .strict()
      .prefault({})
      .refine(
        (m) => !m.enabled || m.token !== '' || m.allowLoopback,
        'metrics.enabled needs metrics.token (for remote scrapers) or metrics.allowLoopback (for a scraper on this machine)',
      )
      .describe(
        'Prometheus metrics (prom-client): MCP operation durations, tool results, admission refusals, sessions, index, workers, audit, process.',
      ),
    panel: z
      .object({
        enabled: z
          .boolean()
          .default(true)
          .describe(
            'Serve the operator panel at /admin on the HTTP listener. Nobody can sign in until a user has a password (`exocortex users passwd NAME`) or a one-time code (`exocortex users login-link NAME`), so it is on by default; false answers 404 under /admin.',
          ),
        sessionTtlSeconds: z
          .number()
          .int()
          .min(1)
          .max(30 * 24 * 3600)
          .default(12 * 3600)
          .describe(
            'How long a panel sign-in lasts (absolute, from sign-in). Sessions live in the database (panel_sessions): disabling the user or signing out ends them at once.',
          ),
        pageSize: z
          .number()
          .int()
          .min(10)
          .max(500)
          .default(50)
          .describe(
            'Rows one panel table shows (keys, agent edits, zero-result queries); every query is bounded by it.',
          ),
      })
      .strict()
      .prefault({})
      .describe(
        'The operator panel (/admin): server-rendered pages for vaults, usage, credentials, agent edits, index and search, and the danger zone. Sign-in failures share oauth.signInFailures per address.',
      ),
    oauth: z
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
    admission: z
      .object({
        callsPerMinute: z
          .number()
          .int()
          .min(1)
          .default(1200)
          .describe('Rate bucket per credential over all tool calls; beyond it calls are refused as rate_limited.'),
        writesPerMinute: z
          .number()
          .int()
          .min(1)
          .default(120)
          .describe('Rate bucket per credential over write-class tool calls.'),
        concurrency: z
          .object({
            read: z.number().int().min(1).default(32).describe('Concurrent calls of read-class tools.'),
            write: z.number().int().min(1).default(4).describe('Concurrent calls of write-class tools.'),
            expensive: z
              .number()
              .int()
              .min(1)
              .default(2)
              .describe(
                'Concurrent calls of expensive-class tools (regex scans, semantic and hybrid search, audits, imports).',
              ),
          })
          .strict()
          .prefault({})
          .describe('Concurrency slots per admission class; a call waits up to admission.queueTimeoutMs for one.'),
        queueTimeoutMs: z
          .number()
          .int()
          .min(0)
          .default(2000)
          .describe('How long a call waits for a concurrency slot before it is refused as busy.'),
        dailyQuota: z
          .number()
          .int()
          .min(0)
          .default(0)
          .describe(
            'Tool calls per credential per day (0 = unlimited); beyond it calls are refused as quota_exceeded.',
          ),
        maxArgumentDepth: z
          .number()
          .int()
          .min(4)
          .max(1000)
          .default(64)
          .describe(
            'Deepest nesting of objects and arrays accepted in tool arguments; deeper calls are refused as invalid_arguments before validation.',
          ),
        perUser: z
          .object({
            callsPerMinute: limit(LIMIT_TEXT.callsPerMinute).default(0),
            writesPerMinute: limit(LIMIT_TEXT.writesPerMinute).default(0),
            concurrency: z
              .object({
                read: limit(LIMIT_TEXT.read).default(0),
                write: limit(LIMIT_TEXT.write).default(0),
                expensive: limit(LIMIT_TEXT.expensive).default(0),
              })
              .strict()
              .prefault({})
              .describe(
                'Concurrency slots per user and admission class, taken before the server-wide ones; on a shared server, set them below the server-wide slots so no user can hold them all.',
              ),
            dailyQuota: limit(LIMIT_TEXT.dailyQuota).default(0),
            sessions: limit(LIMIT_TEXT.sessions).default(0),
          })
          .strict()
          .prefault({})
          .describe(
            "Defaults over all of one user's credentials together; `exocortex users limits NAME` or a `users` entry's `limits` override them per user.",
          ),
      })
      .strict()
      .prefault({})
      .describe('Limits applied to every tool call before any work, per credential.'),
    tools: z
      .object({
        profile: z
          .enum(['full', 'core'])
          .default('full')
          .describe(
            'Which tools are listed and callable: `full` every tool of the enabled families; `core` about a dozen (read, search, outline, links and backlinks, create, edit, move, tasks, changes) for clients with a tool cap or a small context. Read at start.',
          ),
        callTimeoutMs: z
          .number()
          .int()
          .min(100)
          .default(30000)
          .describe('Deadline of one tool call; past it the call is abandoned and refused as timeout.'),
        maxResultTokens: z
          .number()
          .int()
          .min(1000)
          .max(1_000_000)
          .default(12_000)
          .describe(
            'Most tokens one tool result may hold, its text and structuredContent counted together (cl100k tokens, counted so that CJK text and base64 cannot overshoot; images are not counted). A tool that pages (list_notes, get_changes, list_files, audit_notes, read_note, read_file, fetch, …) shrinks its page or window to fit and says how to continue (cursor, offset); any other result over it is refused as result_too_large. Keep it well under what clients accept (Claude Code: 25,000).',
          ),
      })
      .strict()
      .prefault({})
      .describe('Tool calls.'),
    audit: z
      .object({
        enabled: z
          .boolean()
          .default(true)
          .describe(
            'Record one usage_logs row per tool call (tool, principal, truncated arguments, duration, size, outcome).',
          ),
        paramsMaxChars: z
          .number()
          .int()
          .min(0)
          .default(200)
          .describe('Arguments are stored truncated to this many characters.'),
        batchSize: z.number().int().min(1).default(200).describe('Usage rows written per insert.'),
        flushIntervalMs: z
          .number()
          .int()
          .min(10)
          .default(500)
          .describe('Longest a partial batch of usage rows waits before it is written.'),
        maxQueue: z
          .number()
          .int()
          .min(1)
          .default(10000)
          .describe('Most usage rows buffered; beyond it the oldest are dropped and counted.'),
      })
      .strict()
      .prefault({})
      .describe('The usage log: one row per tool call, written in batches.'),
    workers: z
      .object({
        threads: z
          .number()
          .int()
          .min(0)
          .max(64)
          .default(0)
          .describe(
            'Worker threads for parsing, diffs, regex and token counts (0 = CPU cores − 1, at least 1, at most 4).',
          ),
        idleTimeoutMs: z.number().int().min(0).default(60000).describe('An idle worker thread exits after this long.'),
        interactiveThreads: z
          .number()
          .int()
          .min(1)
          .max(64)
          .default(1)
          .describe(
            'Threads of the interactive worker lane (tasks a tool call waits on); the bulk lane (indexing) has `threads`.',
          ),
        taskTimeoutMs: z
          .number()
          .int()
          .min(0)
          .default(15000)
          .describe(
            'Longest one worker task may run; past it the task is aborted, its thread replaced, and the caller refused as timeout (a note whose parse runs past it is quarantined). 0 = no budget.',
          ),
        maxHeapMb: z
          .number()
          .int()
          .min(0)
          .default(1024)
          .describe(
            "Old-generation heap of one worker thread, in MiB. A task that grows past it ends its thread, not the process: the thread is replaced and the caller refused as worker_failed. 0 = V8's default.",
          ),
        stackSizeMb: z
          .number()
          .int()
          .min(0)
          .max(64)
          .default(4)
          .describe('Stack of one worker thread, in MiB (0 = Node’s default).'),
      })
      .strict()
      .prefault({})
      .describe('The worker-thread pool for CPU-heavy tasks.'),
    index: z
      .object({
        watch: z
          .boolean()
          .default(true)
          .describe(
            'Watch the vault for outside changes (false: only reconcile passes and write-through from our own tools).',
          ),
        debounceMs: z
          .number()
          .int()
          .min(0)
          .max(10000)
          .default(100)
          .describe('Quiet time after a burst of filesystem events before they are indexed.'),
        reconcileSeconds: z
          .number()
          .min(0)
          .default(300)
          .describe(
            'Seconds between reconcile passes that catch anything the watcher missed (0 = only the initial pass).',
          ),
        maxNoteBytes: z
          .number()
          .int()
          .min(1)
          .default(5 * 1024 * 1024)
          .describe('Larger notes are quarantined (listed, not indexed) without being read.'),
        batchSize: z.number().int().min(1).max(1000).default(50).describe('Notes committed per database transaction.'),
        parseTaskSize: z.number().int().min(1).max(1000).default(25).describe('Notes per worker-pool parse task.'),
        prefetchBatches: z
          .number()
          .int()
          .min(1)
          .max(8)
          .default(2)
          .describe('Batches read and parsed ahead of the one being written.'),
        readConcurrency: z.number().int().min(1).max(256).default(16).describe('Concurrent file reads within a batch.'),
        inlineParseMaxBytes: z
          .number()
          .int()
          .min(0)
          .default(16 * 1024)
          .describe(
            'Write-through notes up to this many bytes are parsed on the event loop, larger ones in the worker pool. Parsing is linear, at most a few ms per KiB on adversarial text (docs/performance.md), so this bounds the event-loop time of one parse.',
          ),
        groupCommitWaitMs: z
          .number()
          .int()
          .min(0)
          .max(1000)
          .default(10)
          .describe(
            "How long a write-through batch may wait for the vault's other write calls in flight, so they share one transaction (it never waits for a lone writer; 0 = never wait).",
          ),
        deferredWrites: z
          .boolean()
          .default(true)
          .describe(
            "Write-through in two transactions: the note's row and most contributors' rows first, then the tool answers, then the deferred rows (the keyword index); searches wait for them. false: one transaction, answered after all of it.",
          ),
        rootCheckSeconds: z
          .number()
          .min(0)
          .default(10)
          .describe(
            'Seconds between checks that each vault root is still the folder it was opened as; a vanished or replaced root makes its vault unavailable (on /health, refused as vault_unavailable) until it is back, without disturbing the others (0 = never check).',
          ),
        deferredDelayMs: z
          .number()
          .int()
          .min(0)
          .max(10_000)
          .default(200)
          .describe(
            'Longest the deferred rows of a write-through wait before their transaction; a note written again meanwhile is derived once (0 = right after each batch).',
          ),
      })
      .strict()
      .prefault({})
      .describe(
        'The live index pipeline (initial scan, watcher, reconcile passes, write-through). Takes effect on restart.',
      ),
    log: z
      .object({
        level: z
          .enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])
          .default('info')
          .describe('Log level of the JSON lines written to stderr (`silent`: none).'),
      })
      .strict()
      .prefault({})
      .describe('Logging.'),
    reload: z
      .object({
        watchConfig: z
          .boolean()
          .default(true)
          .describe('Watch the config file and hot-reload families when it changes (SIGHUP reloads too).'),
      })
      .strict()
      .prefault({})
      .describe('Hot reload of families.'),
    vaults: z
      .array(declaredVaultSchema)
      .default([])
      .describe(
        'Vaults served besides vault.path, declared as code (`name`, `path`, `shared`). The config file wins for what it names: the CLI refuses to change or remove these, and a vault of the same name made with the CLI but defined differently is a contradiction, refused by name at start and reload. Entries removed from the file stop being served and are deleted (refused while users the file does not declare still use them). Applied live on reload.',
      ),
    users: z
      .array(declaredUserSchema)
      .default([])
      .describe(
        'Users declared as code (`name`, `vault`, `admin`, `disabled`), each bound to one vault. Same precedence as `vaults`: the file wins for the users it names; a user removed from the file is disabled. Single-user mode needs none: the implicit `operator` user is bound to vault.path.',
      ),
    families: z
      .record(
        z.string().regex(/^[a-z][a-z0-9-]{0,39}$/, 'a family name: lowercase letters, digits and -'),
        familyToggleSchema,
      )
      .default({})
      .describe(
        'Per family (by name): `enabled` switches it off or on, `readOnly` hides and refuses its write tools. First-party families are on unless switched off here.',
      ),
    plugins: z
      .array(z.string().min(1))
      .default([])
      .describe('Third-party families: npm package names or paths to a family module or folder.'),
  })
  .strict();

export type HostSettings = z.infer<typeof hostSettingsSchema>;

/** Top-level keys the host owns; any other top-level key must be claimed by a family's settings. */
export const HOST_KEYS: ReadonlySet<string> = new Set(Object.keys(hostSettingsSchema.shape));
