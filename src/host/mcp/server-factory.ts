// Builds one low-level MCP `Server` (SDK v2) bound to a principal, answering from the live family
// registry, for either protocol era. Knows nothing about transports: the HTTP and stdio modules serve
// what this returns, per request (2026-07-28 and session-less 2025 requests) or per session.
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  inputRequired,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CacheHint,
  type ClientCapabilities,
  type ServerContext,
} from './sdk.js';
import { isInputNeeded, type ClientChannel, type ClientLogLevel, type InputNeeded } from '../../sdk/client-channel.js';
import { Refusal, isRefusal } from '../../sdk/refusals.js';
import type { Principal } from '../../sdk/types.js';
import type { ToolDispatcher } from '../families/dispatch.js';
import type { FamilyRegistry, ResourceEntry } from '../families/registry.js';
import type { RequestStateSeal } from './request-state.js';
import type { ResourceSubscriptions } from './subscriptions.js';
import { refusalJsonRpcError } from '../refusal-presenter.js';
import { PACKAGE_VERSION } from '../package-info.js';
import { databaseUnavailable, isDatabaseUnavailable } from '../db/unavailable.js';

export const SERVER_NAME = 'exocortex';
export const SERVER_VERSION = PACKAGE_VERSION;

export function serverInstructions(vaultName: string): string {
  return [
    `This server is the user's Obsidian vault "${vaultName}": markdown notes linked with [[wikilinks]], tags and frontmatter, shared between you and the user as long-term memory.`,
    'Orient with get_vault_guide, find notes with the search tools, read before you write, and follow links to gather context.',
    'Writes never clobber: pass the content_hash you read as expected_hash when changing a note, use dry_run to preview a diff, and deletes go to .trash/ unless made permanent.',
    'A refused call ends with a line "MCP-REFUSAL {json}" whose code says what to fix; retryable codes may succeed later unchanged.',
  ].join(' ');
}

export interface ServerDeps {
  readonly registry: FamilyRegistry;
  readonly dispatcher: ToolDispatcher;
  /** The name of a principal's vault, for the instructions (each user is told of their own vault only). */
  readonly vaultName: (vaultId: number) => string;
  readonly resourceListCap?: number;
  readonly subscriptions: ResourceSubscriptions;
  /** Seals the requestState of input-needed results; shared by every instance, since rounds may reach any. */
  readonly requestStates: RequestStateSeal;
}

/** A session's principal and registry; a promise while the host is still starting (stdio). */
export type SessionSource =
  | { principal: Principal; deps: ServerDeps }
  | Promise<{ principal: Principal; deps: ServerDeps }>;

/**
 * What the connection serving this instance can deliver after the answer: list_changed and
 * resources/updated need somewhere to send them (a 2025 session or stdio, or a 2026-07-28
 * subscriptions/listen stream). A one-request 2025 instance has nowhere, so it does not advertise them.
 */
export interface Delivery {
  readonly notifications: boolean;
}

/** Within this long of a registry change (a hot reload), list results carry a short TTL. */
const RECENT_CHANGE_MS = 5 * 60_000;

/**
 * Cache hints for 2026-07-28 results. Lists depend on the credential (scopes, read-only), so they are
 * private; they stay fresh for a minute, or five seconds while families were just reloaded. Reads of
 * notes change whenever the note does: not cacheable.
 */
export function cacheHints(
  registry: FamilyRegistry,
  now = Date.now(),
): Partial<
  Record<
    | 'tools/list'
    | 'prompts/list'
    | 'resources/list'
    | 'resources/templates/list'
    | 'resources/read'
    | 'server/discover',
    CacheHint
  >
> {
  const recent = now - registry.changedAt < RECENT_CHANGE_MS;
  const list: CacheHint = { ttlMs: recent ? 5_000 : 60_000, cacheScope: 'private' };
  return {
    'server/discover': list,
    'tools/list': list,
    'prompts/list': list,
    'resources/templates/list': list,
    'resources/list': { ttlMs: recent ? 5_000 : 10_000, cacheScope: 'private' },
    'resources/read': { ttlMs: 0, cacheScope: 'private' },
  };
}

export function createMcpServer(principal: Principal, deps: ServerDeps, delivery: Delivery): Server {
  return createLazyMcpServer({ principal, deps }, deps.vaultName(principal.vaultId), delivery, deps.registry);
}

/** Initialize and discover are answered at once; every other handler waits for the source to be ready. */
export function createLazyMcpServer(
  source: SessionSource,
  vaultName: string,
  delivery: Delivery,
  registry?: FamilyRegistry,
): Server {
  const listChanged = delivery.notifications;
  const server = new Server(
    { name: SERVER_NAME, version: SERVER_VERSION, title: 'Exocortex vault memory' },
    {
      capabilities: {
        tools: { listChanged },
        prompts: { listChanged },
        resources: { listChanged, subscribe: listChanged },
        completions: {},
        logging: {},
      },
      instructions: serverInstructions(vaultName),
      ...(registry ? { cacheHints: cacheHints(registry) } : {}),
      // Runs before the handler on every round that echoes a requestState; a throw is answered -32602.
      requestState: {
        verify: async (state, ctx) => {
          const { principal, deps } = await ready;
          return deps.requestStates.open(state, principal.id, ctx);
        },
      },
    },
  );
  const ready = Promise.resolve(source);
  const inputRequiredFor = async (out: InputNeeded, ctx: ServerContext) => {
    const { principal, deps } = await ready;
    const requestState =
      out.requestState === undefined
        ? undefined
        : await deps.requestStates.seal(out.requestState, principal.id, ctx.mcpReq.method);
    return inputRequired({
      ...(out.inputRequests ? { inputRequests: out.inputRequests as never } : {}),
      ...(requestState !== undefined ? { requestState } : {}),
    });
  };

  server.setRequestHandler('tools/list', async () => {
    const { principal, deps } = await ready;
    return {
      tools: deps.registry.describedTools(principal).map(({ entry: { tool }, description }) => ({
        name: tool.name,
        title: tool.schema.title,
        description,
        inputSchema: tool.schema.inputSchema as { type: 'object'; [k: string]: unknown },
        ...(tool.schema.outputSchema
          ? { outputSchema: tool.schema.outputSchema as { type: 'object'; [k: string]: unknown } }
          : {}),
        annotations: { title: tool.schema.title, ...tool.schema.annotations },
      })),
    };
  });

  server.setRequestHandler('tools/call', async (request, ctx) => {
    const { principal, deps } = await ready;
    const out = await deps.dispatcher.call(principal, request.params.name, request.params.arguments ?? {}, {
      signal: ctx.mcpReq.signal,
      client: channelFor(server, ctx),
    });
    return (isInputNeeded(out) ? await inputRequiredFor(out, ctx) : out) as never;
  });

  server.setRequestHandler('prompts/list', async () => {
    const { principal, deps } = await ready;
    return {
      prompts: deps.registry.listPrompts(principal).map(({ name, prompt }) => ({
        name,
        title: prompt.title,
        description: prompt.description,
        arguments: prompt.arguments
          ? prompt.arguments.map(({ name: n, description, required }) => ({ name: n, description, required }))
          : undefined,
      })),
    };
  });

  server.setRequestHandler('prompts/get', async (request, ctx) => {
    const { principal, deps } = await ready;
    const entry = deps.registry.findPrompt(request.params.name);
    if (!entry || !deps.registry.listPrompts(principal).includes(entry))
      throw protocolError(new Refusal('unknown_prompt', { prompt: request.params.name }));
    try {
      const pctx = deps.dispatcher.contextFor(entry.generation, principal, ctx.mcpReq.signal, channelFor(server, ctx));
      const out = await entry.prompt.get(request.params.arguments ?? {}, pctx);
      if (isInputNeeded(out)) return (await inputRequiredFor(out, ctx)) as never;
      return { description: out.description, messages: out.messages as never };
    } catch (e) {
      throw protocolError(e);
    }
  });

  server.setRequestHandler('resources/list', async (_request, ctx) => {
    const { principal, deps } = await ready;
    const resources: Array<{ uri: string; name: string; title?: string; description?: string; mimeType?: string }> = [];
    const cap = deps.resourceListCap ?? 200;
    for (const entry of deps.registry.listResources(principal)) {
      const r = entry.resource;
      if (r.uri)
        resources.push({ uri: r.uri, name: r.name, title: r.title, description: r.description, mimeType: r.mimeType });
      else if (r.list && resources.length < cap) {
        const rctx = deps.dispatcher.contextFor(entry.generation, principal, ctx.mcpReq.signal);
        for (const item of await r.list(rctx)) if (resources.length < cap) resources.push(item);
      }
    }
    return { resources };
  });

  server.setRequestHandler('resources/templates/list', async () => {
    const { principal, deps } = await ready;
    return {
      resourceTemplates: deps.registry
        .listResources(principal)
        .filter((e) => e.resource.uriTemplate)
        .map(({ resource: r }) => ({
          uriTemplate: r.uriTemplate!,
          name: r.name,
          title: r.title,
          description: r.description,
          mimeType: r.mimeType,
        })),
    };
  });

  server.setRequestHandler('resources/read', async (request, ctx) => {
    const { principal, deps } = await ready;
    const uri = request.params.uri;
    const match = matchResource(deps.registry.listResources(principal), uri);
    if (!match) throw protocolError(new Refusal('unknown_resource', { uri }));
    try {
      const rctx = deps.dispatcher.contextFor(
        match.entry.generation,
        principal,
        ctx.mcpReq.signal,
        channelFor(server, ctx),
      );
      const out = await match.entry.resource.read(uri, match.params, rctx);
      if (isInputNeeded(out)) return (await inputRequiredFor(out, ctx)) as never;
      return { contents: out as never };
    } catch (e) {
      // A template that matched but names nothing (a missing note) is the SDK's resource-not-found
      // (-32602 with data.uri on every revision), not an internal error.
      if (isRefusal(e) && (e as Refusal).code === 'not_found') throw resourceNotFound(uri, e as Refusal);
      throw protocolError(e);
    }
  });

  server.setRequestHandler('completion/complete', async (request, ctx) => {
    const { principal, deps } = await ready;
    const { ref, argument } = request.params;
    const context = request.params.context?.arguments ?? {};
    let values: readonly string[] = [];
    try {
      if (ref.type === 'ref/prompt') {
        const entry = deps.registry.findPrompt(ref.name);
        const arg = entry?.prompt.arguments?.find((a) => a.name === argument.name);
        if (entry && arg?.complete && deps.registry.listPrompts(principal).includes(entry)) {
          values = await arg.complete(
            argument.value,
            context,
            deps.dispatcher.contextFor(entry.generation, principal, ctx.mcpReq.signal),
          );
        }
      } else {
        const entry = deps.registry.listResources(principal).find((e) => e.resource.uriTemplate === ref.uri);
        const complete = entry?.resource.complete?.[argument.name];
        if (entry && complete)
          values = await complete(
            argument.value,
            context,
            deps.dispatcher.contextFor(entry.generation, principal, ctx.mcpReq.signal),
          );
      }
    } catch (e) {
      throw protocolError(e);
    }
    // The spec caps one answer at 100 values; say how many there were so the client can narrow.
    return {
      completion: {
        values: values.slice(0, COMPLETION_CAP),
        total: values.length,
        hasMore: values.length > COMPLETION_CAP,
      },
    };
  });

  // 2025-era per-resource subscriptions (on 2026-07-28 they ride subscriptions/listen, which the SDK answers).
  server.setRequestHandler('resources/subscribe', async (request) => {
    const { principal, deps } = await ready;
    if (!matchResource(deps.registry.listResources(principal), request.params.uri))
      throw protocolError(new Refusal('unknown_resource', { uri: request.params.uri }));
    try {
      await deps.dispatcher.admitRequest(principal);
      deps.subscriptions.subscribe(server, request.params.uri, principal.vaultId);
    } catch (e) {
      throw protocolError(e);
    }
    return {};
  });

  server.setRequestHandler('resources/unsubscribe', async (request) => {
    const { deps } = await ready;
    deps.subscriptions.unsubscribe(server, request.params.uri);
    return {};
  });

  const closed = server.onclose;
  server.onclose = () => {
    closed?.();
    void ready.then(
      ({ deps }) => deps.subscriptions.drop(server),
      () => undefined,
    );
  };
  return server;
}

/** The most values one completion answer lists (the spec's cap). */
const COMPLETION_CAP = 100;

/** The client channel of one request: progress when it sent a token, log messages at its level, input answers. */
function channelFor(server: Server, ctx: ServerContext): ClientChannel {
  const token = ctx.mcpReq._meta?.progressToken;
  const caps: ClientCapabilities =
    server.getClientCapabilities() ??
    ((ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as
      | ClientCapabilities
      | undefined) ??
    {};
  let last = -Infinity;
  const state = ctx.mcpReq.requestState();
  const info =
    server.getClientVersion() ??
    ((ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_INFO_META_KEY] as
      | { name?: unknown }
      | undefined);
  const clientName = typeof info?.name === 'string' ? info.name.slice(0, 200) : undefined;
  return {
    progress(progress, total, message) {
      if (token === undefined || !(progress > last)) return;
      last = progress;
      void ctx.mcpReq
        .notify({
          method: 'notifications/progress',
          params: {
            progressToken: token,
            progress,
            ...(total !== undefined ? { total } : {}),
            ...(message ? { message } : {}),
          },
        })
        .catch(() => undefined);
    },
    log(level: ClientLogLevel, data: unknown) {
      void ctx.mcpReq.log(level, data, SERVER_NAME).catch(() => undefined);
    },
    can: {
      elicitation: caps.elicitation !== undefined,
      sampling: caps.sampling !== undefined,
      roots: caps.roots !== undefined,
    },
    ...(clientName ? { clientName } : {}),
    ...(ctx.mcpReq.inputResponses ? { inputResponses: ctx.mcpReq.inputResponses } : {}),
    ...(typeof state === 'string' ? { requestState: state } : {}),
  };
}

/** Match a URI against fixed resources, then RFC 6570 level-1 templates (`{name}`, `{+path}`). */
export function matchResource(
  entries: readonly ResourceEntry[],
  uri: string,
): { entry: ResourceEntry; params: Record<string, string> } | undefined {
  for (const entry of entries) if (entry.resource.uri === uri) return { entry, params: {} };
  for (const entry of entries) {
    const t = entry.resource.uriTemplate;
    if (!t) continue;
    const names: string[] = [];
    const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    let pattern = '';
    let last = 0;
    for (const m of t.matchAll(/\{(\+?)(\w+)\}/g)) {
      pattern += escape(t.slice(last, m.index)) + (m[1] ? '(.+)' : '([^/]+)');
      names.push(m[2]);
      last = m.index! + m[0].length;
    }
    pattern += escape(t.slice(last));
    const m = new RegExp(`^${pattern}$`).exec(uri);
    if (m) {
      const params: Record<string, string> = {};
      names.forEach((n, i) => {
        try {
          params[n] = decodeURIComponent(m[i + 1]);
        } catch {
          params[n] = m[i + 1];
        }
      });
      return { entry, params };
    }
  }
  return undefined;
}

/** Resource not found as the SDK's ResourceNotFoundError reads it (InvalidParams carrying the uri), with the refusal. */
function resourceNotFound(uri: string, r: Refusal): ProtocolError {
  const body = refusalJsonRpcError(r, { uri });
  return new ProtocolError(body.code, body.message, body.data);
}

function protocolError(e: unknown): ProtocolError {
  const refusal = isRefusal(e) ? (e as Refusal) : isDatabaseUnavailable(e) ? databaseUnavailable() : undefined;
  if (refusal) {
    const body = refusalJsonRpcError(refusal);
    return new ProtocolError(body.code, body.message, body.data);
  }
  return new ProtocolError(ProtocolErrorCode.InternalError, 'internal error');
}
