// The public plugin API: what a family (built-in or third-party) imports, and nothing else. Every name is
// listed here on purpose (test/unit/architecture/sdk-entry.test.ts refuses `export *`), so that what the SDK
// promises is read in one place and a module's helper does not become public by being exported for a sibling.
// Nothing here imports the host (test/unit/architecture/layering.test.ts).

// Defining a family and its tools.
export {
  FAMILY_BRAND,
  backlogOf,
  defineFamily,
  isDefinedFamily,
  originOf,
  pruneVaultTables,
  type DefinedFamily,
  type FamilyDefinition,
  type HealthBacklog,
  type UntypedTools,
} from './define-family.js';
export { defineTool } from './define-tool.js';
export type {
  AdmissionClass,
  ChangeOrigin,
  CompleteValues,
  ContentBlock,
  ContributorFactoryContext,
  ContributorItem,
  Database,
  DatabaseTransaction,
  FamilyCommand,
  FamilyCommandContext,
  FamilyMigration,
  FamilyRouteContext,
  FamilyRoutes,
  HealthContext,
  HostInfo,
  IndexContributor,
  IndexedNote,
  JsonSchema,
  ListEvents,
  Logger,
  PassEnd,
  Principal,
  PromptArgument,
  PromptDefinition,
  PromptMessage,
  RemoveReason,
  RemovedNote,
  ResourceContents,
  ResourceDefinition,
  ResourceEvents,
  ServiceFactoryContext,
  ServiceProvider,
  ToolAnnotations,
  ToolContext,
  ToolFor,
  ToolModule,
  ToolSchemaDocument,
  ToolSignature,
  ToolSignatures,
  ToolsOf,
  VaultHandle,
  WorkerLane,
  WorkerPool,
} from './types.js';

// Refusals: the typed errors every surface presents the same way.
export {
  REFUSALS,
  REFUSAL_LINE_PREFIX,
  Refusal,
  familyRefusalSpecs,
  familyRefusals,
  fillTemplate,
  isRefusal,
  parseRefusalLine,
  refusalLine,
  refusalOwner,
  refusalSpec,
  registerFamilyRefusals,
  renderRefusal,
  type AnyRefusalCode,
  type FamilyRefusals,
  type RefusalCode,
  type RefusalDetails,
  type RefusalSpec,
} from './refusals.js';

// Services: typed refs a family requires or provides, and the host's own.
export {
  optional,
  parseRequirement,
  serviceName,
  serviceRef,
  type OptionalServiceRef,
  type ServiceLookup,
  type ServiceRef,
  type ServiceRequirement,
} from './service-ref.js';
export {
  DATABASE,
  EMBEDDINGS,
  INDEX,
  LINKS,
  LIST_EVENTS,
  NOTE_WRITER,
  RESOURCE_EVENTS,
  WORKERS,
  WRITE_OBSERVERS,
} from './services.js';
export type { IndexLag, IndexService, IndexStatus } from './index-service.js';
export { indexLag } from './index-service.js';
export type {
  Availability,
  EmbeddingCounts,
  EmbeddingsService,
  NearestNote,
  NoteFilters,
} from './contracts/embeddings.js';
export type { LinksService, StoredLink } from './contracts/links.js';

// The vault and writing to it.
export type {
  ListOptions,
  ReadOptions,
  ReplaceOptions,
  TrashResult,
  VaultCapabilities,
  VaultEntry,
  VaultEntryKind,
  VaultFs,
  VaultStat,
  WriteResult,
} from './vault.js';
export type {
  NoteIncumbent,
  NoteWriteResult,
  NoteWriter,
  WriteEvent,
  WriteKind,
  WriteObserver,
  WriteObserverDeclaration,
  WriteObservers,
} from './write-hooks.js';
export {
  createFileObserved,
  observeWrite,
  observedWrite,
  replaceFileObserved,
  toolWriteScope,
  writesObserved,
  type WriteAuthor,
  type WriteIntent,
  type WriteScope,
} from './write-path.js';
export {
  moveWithLinks,
  renderMoveResult,
  type MoveWithLinksOptions,
  type MoveWithLinksResult,
} from './link-moves.js';
export { notePathAsGiven, resolveNotePath } from './note-target.js';
export { noteViewUrl, notePathSegments } from './note-view-url.js';
export { obsidianLink } from './obsidian-link.js';

// Queries: folder scope, limits, cursors and SQL arrays shared by every listing tool.
export {
  PERSON_ACTOR_KINDS,
  WHOLE_VAULT,
  agentActorSql,
  bigintArray,
  clampLimit,
  cursorCodec,
  cursorPaging,
  escapeLike,
  folderScope,
  inFolder,
  isAgentActor,
  jsonb,
  offsetPager,
  tagKey,
  tagKeys,
  textArray,
  textWindow,
  underFolder,
  windowPaging,
  type CursorCodec,
  type CursorOwner,
  type FolderScope,
  type OffsetPager,
} from './query/index.js';
export type { ResultPaging, BudgetCut } from './result-budget.js';

// Scopes, the client channel and small helpers.
export {
  mayRead,
  mayWrite,
  parseScopes,
  scopeNeeded,
  scopeProblem,
  writesAnything,
  type Scope,
} from './scopes.js';
export {
  inputNeeded,
  isInputNeeded,
  silentChannel,
  type ClientChannel,
  type ClientLogLevel,
  type InputNeeded,
  type InputRequest,
} from './client-channel.js';
export { CONTROL_CHAR_RE, printable } from './printable.js';
export { mapLimit } from './map-limit.js';
export { ModelMemo } from './model-memo.js';

// Outbound fetches (imports): the SSRF policy every family that dials out goes through.
export { deniedAddressRule, isIpLiteral, type IpPolicy } from './ssrf/ip-policy.js';
export { UrlRefusedError, foldHost, vetUrl, type UrlPolicy, type VettedUrl } from './ssrf/url-policy.js';
export {
  ImportError,
  fetchUrl,
  nextHop,
  systemConnector,
  systemResolver,
  vettedAddress,
  type ConnectRequest,
  type Connector,
  type DnsAnswer,
  type Fetched,
  type ImportDeps,
  type ImportLimits,
  type Resolver,
} from './ssrf/guarded-fetch.js';

// Large lists in pieces (a huge note's rows and fingerprints, produced a slice per event-loop turn).
export { JSON_PIECE_ENTRIES, jsonPieces, rowSlices } from './json-pieces.js';
export { formatMoment } from './moment-format.js';
