// Types of the plugin contract: what a family declares and what a handler receives through ctx.
// Pure declarations; imports nothing of ours but other sdk modules.

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import type { RefusalCode, RefusalDetails } from './refusals.js';
import type { ResultPaging } from './result-budget.js';
import type { VaultFs } from './vault.js';
import type { ClientChannel, InputNeeded } from './client-channel.js';

import type { Scope } from './scopes.js';
import type { ServiceLookup } from './service-ref.js';

export type { ServiceLookup } from './service-ref.js';

export interface Principal {
  readonly kind: 'api_key' | 'operator' | 'oauth' | 'panel' | 'test';
  /** Credential id (api key id) or a fixed name for the operator. */
  readonly id: string;
  /** Human name of the credential, for audit and messages. */
  readonly name: string;
  readonly user: string;
  readonly vaultId: number;
  readonly scopes: readonly Scope[];
  /** When the credential stops working (ms since epoch), if it expires. */
  readonly expiresAt?: number;
  /**
   * The OAuth client an access token was issued to (its registered name and id): recorded on every
   * write made with the token, whatever name the MCP session gives itself (or none, without a session).
   */
  readonly client?: { readonly id: string; readonly name: string };
}

/** Admission classes: each has its own concurrency slots; `write` also has its own rate bucket. */
export type AdmissionClass = 'read' | 'write' | 'expensive';

export interface ToolAnnotations {
  readonly readOnlyHint: boolean;
  readonly destructiveHint: boolean;
  readonly idempotentHint: boolean;
  readonly openWorldHint: boolean;
}

/** A JSON Schema document as stored under schemas/<family>/<tool>.json. */
export interface ToolSchemaDocument {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  /** What an agent rarely needs to choose or call the tool: shown in docs/tools.md after the description, never served. */
  readonly details?: string;
  readonly annotations: ToolAnnotations;
  readonly admission: AdmissionClass;
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
  /**
   * Optional services (declared `name?` in the family's requires) without which this tool cannot
   * work: while one is absent the tool is left out of tools/list and refused as service_unavailable.
   */
  readonly requiresServices?: readonly string[];
  /**
   * The tool answers from the index. While the index lags the vault, the host adds `index_pending` (notes
   * likely missing) and `index_notice` (one sentence) to its structuredContent and puts the sentence first
   * in its text, so every such tool warns the same way; the compiler adds both to the outputSchema.
   */
  readonly answersFromIndex?: boolean;
  /**
   * A tool that reads unless one of these boolean arguments is true (get_periodic_note's create_if_missing):
   * it is listed for read-only families, vaults and credentials, and the host refuses only the calls that
   * set one of them, as it refuses write tools.
   */
  readonly writesOnlyWith?: readonly string[];
  /**
   * The tool profiles (setting tools.profile) that list this tool besides `full`, which lists every tool:
   * `core` is the small set a client with a tool cap or a small context loads.
   */
  readonly profiles?: readonly string[];
}

export type JsonSchema = { readonly [key: string]: unknown };

export interface Logger {
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
}

/**
 * Worker lanes: `interactive` for work a tool call waits on (the default), `bulk` for background work
 * (indexing, embedding chunks), so that a long bulk task never holds up a call.
 */
export type WorkerLane = 'interactive' | 'bulk';

export interface WorkerPool {
  /**
   * Run a CPU-heavy task off the event loop. `task` names a built-in task (see the host's
   * worker task table: `unified-diff`, `count-tokens` ({texts} → cl100k counts), `sha256`,
   * `parse-notes`) or `{ module, fn }` for a family's own module (an absolute file URL). A task past
   * the host's per-task budget (workers.taskTimeoutMs, counted from the task's start, not its wait in the
   * queue) is aborted and rejects with a `timeout` Refusal.
   */
  run<T = unknown>(
    task: string | { module: string; fn: string },
    payload: unknown,
    options?: { signal?: AbortSignal; lane?: WorkerLane },
  ): Promise<T>;
  /**
   * Start the pool's threads now, in the background, so the first real task does not wait for a thread
   * to boot and load its modules (hundreds of milliseconds): every lane's, or only `lane`'s. Optional;
   * never throws.
   */
  warm?(lane?: WorkerLane): void;
}

export type Database = Kysely<any>;
export type DatabaseTransaction = Transaction<any>;

/** Facts about the serving host a family may need (never secrets). */
export interface HostInfo {
  /** server.publicUrl: the https:// origin clients reach, or null when only loopback is served. */
  readonly publicUrl: string | null;
  /** The database engine behind ctx.db: embedded PGlite (in-process WASM) or a PostgreSQL server. */
  readonly databaseEngine: 'pglite' | 'postgres';
}

export interface VaultHandle {
  readonly id: number;
  readonly name: string;
  /** vault.obsidianName: the vault's name in Obsidian, for `obsidian://open` links; null when unset. */
  readonly obsidianName: string | null;
  readonly fs: VaultFs;
}

export interface ToolContext<Settings = Record<string, unknown>> extends ServiceLookup {
  readonly principal: Principal;
  readonly vault: VaultHandle;
  readonly db: Database;
  readonly workers: WorkerPool;
  readonly log: Logger;
  readonly server: HostInfo;
  /** Aborts when the call's deadline passes or the client goes away. */
  readonly signal: AbortSignal;
  /** The tool being called (absent for prompts and resources): for attribution of writes. */
  readonly tool?: string;
  /** The family's own settings (its declared sections of the config file, defaults applied). */
  readonly settings: Settings;
  /** Whether this call may write (family not read-only and principal has readwrite). */
  readonly canWrite: boolean;
  readonly now: () => Date;
  // service(ref) / hasService(ref): a service the family declared in `requires` (ServiceLookup).
  /** Throw a typed refusal; never returns. */
  refuse(code: RefusalCode, details?: RefusalDetails, message?: string): never;
  /** Progress, log messages and input answers of this call's client (silent outside an MCP request). */
  readonly client: ClientChannel;
}

export interface HealthContext extends ServiceLookup {
  readonly vaultId: number;
  readonly db: Database;
}

/**
 * One tool: its handler and how its answer is shown. `I` and `O` come from the tool's schema (see ToolFor). The
 * members are function-typed properties, not methods, so their parameters are checked strictly: a handler
 * written for arguments the schema does not declare is not a module of that tool.
 */
export interface ToolModule<I = any, O = any> {
  readonly handler: (input: I, ctx: ToolContext<any>) => Promise<O> | O;
  /** Compact text an LLM reads well; when absent the host sends JSON. */
  readonly render?: (output: O) => string;
  /**
   * What the audit row records of the arguments (before truncation); default: the arguments as
   * given. Use it to drop what must not be stored (a URL's path and query, say). Gets the raw arguments.
   */
  readonly auditParams?: (args: Record<string, unknown>) => unknown;
  /**
   * Whether the tool can work with the services serving now: `true`, or the reason it cannot. While it
   * cannot, the tool is left out of tools/list and calls are refused as service_unavailable. Keep it
   * cheap and about configuration (evaluated on every listing), not about transient outages.
   */
  readonly available?: (services: ServiceLookup) => true | string;
  /** Extra MCP content blocks sent after the text (e.g. an image the tool read). */
  readonly content?: (output: O) => ContentBlock[];
  /**
   * How the answer shrinks to the result budget (tools.maxResultTokens), for a tool whose answer can
   * grow past it. A result over the budget from a tool without paging is refused as result_too_large.
   */
  readonly paging?: ResultPaging<I, O>;
}

/**
 * A tool's argument and result types as `npm run gen` writes them from its schema: each family's generated
 * tool map (`NotesTools` in src/generated/notes/index.ts, or `<dir>/generated/index.ts` for a family folder)
 * holds one per tool. `input` is what a caller may send (defaults, which the host fills in, stay optional).
 */
export interface ToolSignature {
  readonly input: object;
  readonly output: unknown;
}

/** A family's tools by name, each with its signature: the shape of a generated tool map (`T` is the map itself). */
export type ToolSignatures<T = Record<string, unknown>> = { readonly [K in keyof T]: ToolSignature };

/** The module of a tool typed from its schema: `ToolFor<NotesTools['read_note']>`. */
export type ToolFor<S extends ToolSignature> = ToolModule<S['input'], S['output']>;

/** A family's `tools`: exactly one module per tool of the generated map, each typed from its schema. */
export type ToolsOf<T extends ToolSignatures<T>> = { readonly [K in keyof T]: ToolFor<T[K]> };

export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'audio'; data: string; mimeType: string }
  | { type: 'resource'; resource: { uri: string; mimeType?: string; text?: string; blob?: string } };

// --- prompts and resources -------------------------------------------------------------------

export interface PromptArgument {
  readonly name: string;
  readonly description?: string;
  readonly required?: boolean;
  /** Values for `completion/complete` that start with (or contain) what the user typed, best first. */
  readonly complete?: CompleteValues;
}

/**
 * Completion candidates for one argument: `value` is what the user typed so far, `context` the other
 * arguments already filled in. Return the best matches first; the host sends at most 100.
 */
export type CompleteValues = (
  value: string,
  context: Readonly<Record<string, string>>,
  ctx: ToolContext<any>,
) => Promise<readonly string[]>;

export interface PromptMessage {
  readonly role: 'user' | 'assistant';
  readonly content: ContentBlock;
}

export interface PromptDefinition {
  readonly title?: string;
  readonly description: string;
  readonly arguments?: readonly PromptArgument[];
  /** Prompts that write (none today) are hidden from read-only principals. */
  readonly writes?: boolean;
  /** The prompt's messages, or `inputNeeded(…)` to ask the client for input first. */
  get(
    args: Record<string, string>,
    ctx: ToolContext<any>,
  ): Promise<{ description?: string; messages: PromptMessage[] } | InputNeeded>;
}

export interface ResourceContents {
  readonly uri: string;
  readonly mimeType?: string;
  readonly text?: string;
  /** base64 */
  readonly blob?: string;
}

export interface ResourceDefinition {
  /** A fixed URI (`vault://guide`) or an RFC 6570 level-1 template (`vault://note/{path}`). */
  readonly uri?: string;
  readonly uriTemplate?: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  /** The resource's contents, or `inputNeeded(…)` to ask the client for input first. */
  read(uri: string, params: Record<string, string>, ctx: ToolContext<any>): Promise<ResourceContents[] | InputNeeded>;
  /** For templates: completion candidates per template variable (`completion/complete`). */
  readonly complete?: Readonly<Record<string, CompleteValues>>;
  /** For templates: concrete resources to show in resources/list (optional, capped by the host). */
  list?(ctx: ToolContext<any>): Promise<Array<{ uri: string; name: string; mimeType?: string; description?: string }>>;
}

// --- index contributors ------------------------------------------------------------------------

/** A note as stored in the host's `notes` row, passed to contributors after the row is written. */
/** Who made a change that reached the index through our own tools (absent: an outside edit). */
export interface ChangeOrigin {
  readonly kind: Principal['kind'];
  readonly id: string;
  readonly name: string;
}

export interface IndexedNote {
  /** Set when the change came through a tool call (write-through); absent for outside edits. */
  readonly origin?: ChangeOrigin;
  readonly id: number;
  readonly vaultId: number;
  readonly path: string;
  readonly contentHash: string;
  readonly size: number;
  readonly mtimeMs: number;
}

/**
 * Why a contributor's rows for a note go: the file was deleted (`removed`), it can no longer be
 * indexed (`quarantined`: invalid UTF-8, too large, unparsable), another note was moved over its
 * path (`replaced`), or it is re-created under its new path by a contributor without `rename`.
 */
export type RemoveReason = 'removed' | 'quarantined' | 'replaced' | 'renamed';

export interface RemovedNote {
  readonly id: number;
  readonly vaultId: number;
  readonly path: string;
  readonly reason: RemoveReason;
  readonly origin?: ChangeOrigin;
}

export interface ContributorItem<Model = unknown> {
  readonly note: IndexedNote;
  readonly model: Model;
}

export interface IndexContributor<Model = unknown> {
  readonly name: string;
  /** Bump to re-derive only this contributor's rows in the background. */
  readonly version: number;
  write(trx: DatabaseTransaction, note: IndexedNote, model: Model): Promise<void>;
  /**
   * Optional batch form of `write` for the new and changed notes of one index batch (distinct notes,
   * up to index.batchSize). When present the pipeline calls
   * it instead of `write` for those notes; it must leave the same rows as `write` called for each in turn.
   */
  writeMany?(trx: DatabaseTransaction, items: ReadonlyArray<ContributorItem<Model>>): Promise<void>;
  /**
   * Optional: work that needs only the parsed model (text to index, say), run by index passes as soon as a
   * batch is parsed, while the batch before it is still being written, so the transaction that holds the
   * database waits less. It keeps what it derives in a `ModelMemo` for `write`/`writeMany` to find for the same
   * model object; they must still derive it themselves when it never ran (write-through, re-derive) or threw.
   * Synchronous and bounded by the note's size: it runs on the event loop.
   */
  prepare?(model: Model): void;
  /**
   * Optional: a string holding everything `write` derives from (e.g. the note's path and links). When it
   * equals the fingerprint of this contributor's last committed write for the note, the index skips the
   * write. Leave it out when every change must reach `write` (an event log, a full-text body). Over a
   * list that grows with the note (tasks, links), return pieces (`jsonPieces`): the index hashes them one
   * at a time and lets the event loop turn between them, where one string would be a single pause.
   */
  fingerprint?(note: IndexedNote, model: Model): string | Iterable<string>;
  /**
   * Optional: for a write-through (our own tool's write), this contributor's `write`/`writeMany` runs in
   * a later transaction than the one holding the note's row and every other contributor's rows, so the
   * tool answers its caller before these rows are written. They wait up to index.deferredDelayMs, and a
   * note written again meanwhile is derived once, from its newest model. Worth it for a contributor whose
   * write is the costly part of a commit (the keyword index). Whoever reads these rows for a caller must
   * first await `IndexService.settled(vaultId)`, which writes the waiting rows at once and holds until
   * every write-through that has answered has its deferred rows committed. Index passes (scan, watcher,
   * reconcile) defer only notes whose rows are already waiting; a note whose deferred rows were lost (the
   * process stopped in between, or their transaction failed) is re-derived by the next pass.
   */
  readonly deferred?: boolean;
  /**
   * Optional: this contributor keeps no rows, it only watches changes go by (to notify someone at
   * passEnd, say). The index never re-derives the vault for it when it appears or its version changes.
   */
  readonly observer?: boolean;
  remove(trx: DatabaseTransaction, note: RemovedNote): Promise<void>;
  /**
   * Optional batch form of `remove` for the notes one index transaction removes because their files went (a
   * folder deleted, files deleted while the server was down): distinct notes of one vault, every one with
   * reason `removed`. When present the index calls it instead of `remove` for those notes, before their `notes`
   * rows are deleted; it must leave the same rows as `remove` called for each in turn once the pass has ended
   * (its `passEnd` included: the graph queues names for its sweep where one at a time it would re-resolve some).
   */
  removeMany?(trx: DatabaseTransaction, notes: ReadonlyArray<RemovedNote>): Promise<void>;
  /**
   * The note kept its id and moved from `fromPath`. When its content also changed in the same
   * pass, `write` is called right after with the new model.
   */
  rename?(trx: DatabaseTransaction, note: IndexedNote, fromPath: string, model: Model): Promise<void>;
  /**
   * Optional: called right after each index transaction of a vault commits (a write-through, a batch of
   * a pass, deferred rows, a re-derive), whether or not it reached this contributor; never after a
   * rollback. What `write`, `remove` and `rename` did in it is visible to every connection from now on,
   * so this is where a contributor tells others of its rows (the change feed notifies resource
   * subscribers here): `write` runs before the commit, which may still fail. Synchronous and quick; a
   * throw is logged and ignored.
   */
  committed?(vaultId: number): void;
  /**
   * Called once, outside the index's transaction, when the index finishes a pass in which it committed
   * notes (a drain of pending changes, one batch of write-throughs, or a re-derive's last batch), and at the end
   * of every full pass over the vault (`caughtUp`), before the index reports ready. Lets a contributor summarise a
   * pass, e.g. the change feed's `gap` event for changes it did not itemise. What it writes goes through
   * `pass.transaction` (fenced); most passes need none, so the index opens none by itself.
   */
  passEnd?(db: Database, pass: PassEnd): Promise<void>;
}

export interface PassEnd {
  readonly vaultId: number;
  /**
   * True once a full pass over the vault has finished and nothing it found is still queued: the index
   * has caught up with the vault (the first time after a build from empty, and after every later pass).
   */
  readonly caughtUp: boolean;
  /**
   * Run `work` in a transaction that first checks that this process still indexes the vault (a cluster's
   * vault lease; nothing to check on an embedded database): what a pass end writes goes through it, so a
   * process that lost the vault writes nothing after the one that took it over.
   */
  transaction<T>(work: (trx: DatabaseTransaction) => Promise<T>): Promise<T>;
}

export interface ContributorFactoryContext extends ServiceLookup {
  readonly settings: Readonly<Record<string, unknown>>;
  readonly log: Logger;
  // service(ref) is resolved when called (not when the contributor is built): services may come and go with reloads.
}

/**
 * The host service 'resource-events': tell subscribed clients a resource changed. Families call it
 * after their data behind a resource URI changed; sessions of that vault's principals that sent
 * resources/subscribe for that URI receive notifications/resources/updated (resource URIs are relative
 * to the caller's vault, so the vault is part of every update).
 */
export interface ResourceEvents {
  updated(uri: string, vaultId: number): void;
}

/**
 * The host service 'list-events': tell every client that a list it may have cached changed, for a
 * reason the registry cannot see (a tool's `available()` answer flipped, a prompt's arguments now
 * depend on new data). 2025 sessions get notifications/…/list_changed; 2026-07-28 clients get it on
 * their subscriptions/listen streams. Hot reloads announce themselves; families need not call this.
 */
export interface ListEvents {
  toolsChanged(): void;
  promptsChanged(): void;
  resourcesChanged(): void;
}

// --- HTTP routes -------------------------------------------------------------------------------

export interface FamilyRouteContext extends ServiceLookup {
  readonly server: HostInfo;
  readonly db: Database;
  readonly log: Logger;
  readonly settings: Record<string, unknown>;
  /** The vault of the operator (single-vault mode) or by id. */
  vault(id?: number): VaultHandle;
  /**
   * Serve a request where its vault is owned (several processes on one PostgreSQL server). Call it once
   * the request's own credential named the vault, before acting on the vault: false when this process
   * serves it; true when it was answered (streamed to the owner and back, or refused) and the handler
   * must return the reply untouched. `write`: the request changes the vault (a read-only deployment
   * never relays it).
   */
  routeToOwner(
    vaultId: number,
    request: FastifyRequest,
    reply: FastifyReply,
    opts: { write: boolean },
  ): Promise<boolean>;
  /** The client's address: the socket peer's, or the one a verified forwarding process saw. */
  clientAddress(request: FastifyRequest): string;
}

export interface FamilyRoutes {
  /** URL prefixes this family serves (e.g. ['/transfer']). The host dispatches them to the family. */
  readonly prefixes: readonly string[];
  /** A Fastify plugin (encapsulated); receives the route context as `opts.family`. */
  readonly plugin: (app: any, opts: { family: FamilyRouteContext }) => Promise<void>;
}

// --- services ------------------------------------------------------------------------------------

export interface ServiceFactoryContext extends ServiceLookup {
  readonly server: HostInfo;
  readonly db: Database;
  readonly log: Logger;
  readonly settings: Record<string, unknown>;
  readonly workers: WorkerPool;
  vault(id?: number): VaultHandle;
  /**
   * The ids of the vaults this process serves now (their index and writes run here). A service's background
   * work over rows of every vault (a queue) takes these only: the others are on standby here (another
   * process owns them), unavailable, or not held by this process at all, and `vault(id)` refuses them.
   */
  servingVaults(): readonly number[];
}

export interface ServiceProvider<T = unknown> {
  create(ctx: ServiceFactoryContext): Promise<T> | T;
  dispose?(instance: T): Promise<void> | void;
}

// --- migrations ----------------------------------------------------------------------------------

export interface FamilyMigration {
  up(db: Kysely<any>): Promise<void>;
  down?(db: Kysely<any>): Promise<void>;
}

// --- CLI commands ----------------------------------------------------------------------------------

export interface FamilyCommandContext {
  readonly db: Database;
  readonly log: Logger;
  /** The family's validated settings sections (defaults applied). */
  readonly settings: Record<string, unknown>;
  readonly vault: VaultHandle;
  /**
   * Set when the operator asked for one vault only (the panel's vault selector): a command that declares
   * `vaultScoped` then touches that vault's rows only. Unset (the CLI): every vault the database holds.
   */
  readonly onlyVault?: VaultHandle;
  /** Positional arguments after `exocortex <family> <command>`. */
  readonly args: readonly string[];
  /** Progress and results for the operator (stderr); stdout is reserved for what scripts capture. */
  print(line: string): void;
}

export interface FamilyCommand {
  readonly description: string;
  /** It honours `onlyVault` (so the panel offers it per vault); without it a command acts on every vault. */
  readonly vaultScoped?: boolean;
  /** Runs with the family's migrations applied but without booting it (so it can repair what boot refuses). */
  run(ctx: FamilyCommandContext): Promise<void>;
}
