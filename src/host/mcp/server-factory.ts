// Builds one low-level MCP `Server` bound to a principal, answering from the live family registry.
// Knows nothing about transports; the HTTP and stdio modules connect what this returns.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  McpError,
  ErrorCode,
} from '@modelcontextprotocol/sdk/types.js';
import { Refusal, isRefusal } from '../../sdk/refusals.js';
import type { Principal } from '../../sdk/types.js';
import type { ToolDispatcher } from '../families/dispatch.js';
import type { FamilyRegistry, ResourceEntry } from '../families/registry.js';
import type { ResourceSubscriptions } from './subscriptions.js';

export const SERVER_NAME = 'exocortex';
export const SERVER_VERSION = '0.1.0';

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
  readonly vaultName: string;
  readonly resourceListCap?: number;
  readonly subscriptions: ResourceSubscriptions;
}

/** A session's principal and registry; a promise while the host is still starting (stdio). */
export type SessionSource = { principal: Principal; deps: ServerDeps } | Promise<{ principal: Principal; deps: ServerDeps }>;

export function createMcpServer(principal: Principal, deps: ServerDeps): Server {
  return createLazyMcpServer({ principal, deps }, deps.vaultName);
}

/** Initialize is answered at once; every other handler waits for the source to be ready. */
export function createLazyMcpServer(source: SessionSource, vaultName: string): Server {
  const server = new Server(
    { name: SERVER_NAME, version: SERVER_VERSION, title: 'Exocortex vault memory' },
    {
      capabilities: {
        tools: { listChanged: true },
        prompts: { listChanged: true },
        resources: { listChanged: true, subscribe: true },
        logging: {},
      },
      instructions: serverInstructions(vaultName),
    },
  );
  const ready = Promise.resolve(source);

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const { principal, deps } = await ready;
    return {
      tools: deps.registry.listTools(principal).map(({ tool }) => ({
        name: tool.name,
        title: tool.schema.title,
        description: tool.schema.description,
        inputSchema: tool.schema.inputSchema as { type: 'object'; [k: string]: unknown },
        ...(tool.schema.outputSchema ? { outputSchema: tool.schema.outputSchema as { type: 'object'; [k: string]: unknown } } : {}),
        annotations: { title: tool.schema.title, ...tool.schema.annotations },
      })),
    };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { principal, deps } = await ready;
    return deps.dispatcher.call(principal, request.params.name, request.params.arguments ?? {}, { signal: extra.signal });
  });

  server.setRequestHandler(ListPromptsRequestSchema, async () => {
    const { principal, deps } = await ready;
    return {
      prompts: deps.registry.listPrompts(principal).map(({ name, prompt }) => ({
        name,
        title: prompt.title,
        description: prompt.description,
        arguments: prompt.arguments ? [...prompt.arguments] : undefined,
      })),
    };
  });

  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    const { principal, deps } = await ready;
    const entry = deps.registry.findPrompt(request.params.name);
    if (!entry || !deps.registry.listPrompts(principal).includes(entry)) throw mcpError(new Refusal('unknown_prompt', { prompt: request.params.name }));
    try {
      const ctx = deps.dispatcher.contextFor(entry.generation, principal, extra.signal);
      const out = await entry.prompt.get(request.params.arguments ?? {}, ctx);
      return { description: out.description, messages: out.messages };
    } catch (e) {
      throw mcpError(e);
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, async (_request, extra) => {
    const { principal, deps } = await ready;
    const resources: Array<Record<string, unknown>> = [];
    const cap = deps.resourceListCap ?? 200;
    for (const entry of deps.registry.listResources()) {
      const r = entry.resource;
      if (r.uri) resources.push({ uri: r.uri, name: r.name, title: r.title, description: r.description, mimeType: r.mimeType });
      else if (r.list && resources.length < cap) {
        const ctx = deps.dispatcher.contextFor(entry.generation, principal, extra.signal);
        for (const item of await r.list(ctx)) if (resources.length < cap) resources.push(item);
      }
    }
    return { resources } as { resources: Array<{ uri: string; name: string }> };
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => {
    const { deps } = await ready;
    return {
      resourceTemplates: deps.registry
        .listResources()
        .filter((e) => e.resource.uriTemplate)
        .map(({ resource: r }) => ({ uriTemplate: r.uriTemplate!, name: r.name, title: r.title, description: r.description, mimeType: r.mimeType })),
    };
  });

  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const { principal, deps } = await ready;
    const uri = request.params.uri;
    const match = matchResource(deps.registry.listResources(), uri);
    if (!match) throw mcpError(new Refusal('unknown_resource', { uri }));
    try {
      const ctx = deps.dispatcher.contextFor(match.entry.generation, principal, extra.signal);
      return { contents: await match.entry.resource.read(uri, match.params, ctx) } as { contents: Array<{ uri: string; text: string }> };
    } catch (e) {
      throw mcpError(e);
    }
  });

  server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    const { principal, deps } = await ready;
    if (!matchResource(deps.registry.listResources(), request.params.uri)) throw mcpError(new Refusal('unknown_resource', { uri: request.params.uri }));
    try {
      await deps.dispatcher.admitRequest(principal);
      deps.subscriptions.subscribe(server, request.params.uri);
    } catch (e) {
      throw mcpError(e);
    }
    return {};
  });

  server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    const { deps } = await ready;
    deps.subscriptions.unsubscribe(server, request.params.uri);
    return {};
  });

  const closed = server.onclose;
  server.onclose = () => {
    closed?.();
    void ready.then(({ deps }) => deps.subscriptions.drop(server), () => undefined);
  };

  server.setRequestHandler(SetLevelRequestSchema, async () => ({}));
  return server;
}

/** Match a URI against fixed resources, then RFC 6570 level-1 templates (`{name}`, `{+path}`). */
export function matchResource(entries: readonly ResourceEntry[], uri: string): { entry: ResourceEntry; params: Record<string, string> } | undefined {
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

function mcpError(e: unknown): McpError {
  if (isRefusal(e)) {
    const r = e as Refusal;
    const code = r.code === 'unknown_resource' ? -32002 : r.code === 'unknown_prompt' || r.code === 'invalid_arguments' ? ErrorCode.InvalidParams : ErrorCode.InternalError;
    return new McpError(code, r.message, { refusal: { code: r.code, ...r.details } });
  }
  return new McpError(ErrorCode.InternalError, 'internal error');
}
