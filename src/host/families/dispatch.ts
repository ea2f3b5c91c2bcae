// The request path for one tool call, transport-agnostic: find the tool, check write permission,
// admit, validate arguments, run the handler under a deadline, check the output, render, audit.
// Expected failures become refusal results; thrown bugs become `internal` refusals with a reference.
import { randomUUID } from 'node:crypto';
import { indexLag, type IndexLag, type IndexService } from '../../sdk/index-service.js';
import { Refusal, isRefusal, renderRefusal } from '../../sdk/refusals.js';
import type { ContentBlock, Principal, ToolContext } from '../../sdk/types.js';
import { isInputNeeded, silentChannel, type ClientChannel, type InputNeeded } from '../../sdk/client-channel.js';
import type { Admission } from '../admission/index.js';
import type { AuditWriter } from '../audit/batch-writer.js';
import type { HostServices } from './host-services.js';
import type { FamilyGeneration } from './generation.js';
import { canWrite, type FamilyRegistry, type ToolEntry } from './registry.js';

export interface CallResult {
  [key: string]: unknown;
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export interface DispatchOptions {
  readonly signal?: AbortSignal;
  /** The calling client's progress, log and input channel (silent when absent). */
  readonly client?: ClientChannel;
}

export class ToolDispatcher {
  constructor(
    private readonly registry: FamilyRegistry,
    private readonly admission: Admission,
    private readonly audit: AuditWriter,
    private readonly host: HostServices,
    private readonly callTimeoutMs: number,
    private readonly lookupService: (name: string) => unknown,
    private readonly hasService: (name: string) => boolean,
  ) {}

  /** A tool's result, or the input it needs from the client first (see `inputNeeded` in the SDK). */
  async call(principal: Principal, name: string, args: unknown, options: DispatchOptions = {}): Promise<CallResult | InputNeeded> {
    const started = performance.now();
    let entry: ToolEntry | undefined;
    let result: CallResult | InputNeeded;
    let outcome: 'ok' | 'refused' | 'error' = 'ok';
    let refusalCode: string | null = null;
    try {
      entry = this.registry.findTool(name);
      if (!entry) throw new Refusal('unknown_tool', { tool: name });
      if (entry.tool.writes) this.refuseWrite(entry, principal);
      if (principal.expiresAt !== undefined && principal.expiresAt <= Date.now()) throw new Refusal('unauthenticated', {}, 'This credential has expired.');
      const unavailable = this.registry.unavailable(entry);
      if (unavailable) throw new Refusal('service_unavailable', unavailable);
      result = await this.run(entry, principal, args, options);
    } catch (e) {
      const refusal = this.toRefusal(e, name);
      outcome = refusal.code === 'internal' ? 'error' : 'refused';
      refusalCode = refusal.code;
      result = { content: [{ type: 'text', text: renderRefusal(refusal) }], isError: true };
      options.client?.log(refusal.code === 'internal' ? 'error' : 'warning', { tool: name, refusal: refusal.code, message: refusal.message });
    }
    const responseBytes = isInputNeeded(result) ? 0 : result.content.reduce((n, c) => n + (c.type === 'text' ? Buffer.byteLength(c.text) : c.type === 'image' ? c.data.length : 0), 0);
    this.audit.record({
      at: new Date(),
      vaultId: principal.vaultId,
      credentialId: principal.id,
      credentialName: principal.name,
      tool: name.slice(0, 200),
      family: entry?.generation.name ?? null,
      params: this.audit.truncateParams(auditedParams(entry, args)),
      durationMs: performance.now() - started,
      responseBytes,
      outcome,
      refusalCode,
    });
    return result;
  }

  private async run(entry: ToolEntry, principal: Principal, args: unknown, options: DispatchOptions): Promise<CallResult | InputNeeded> {
    const { tool, generation } = entry;
    this.admission.screen(args);
    const release = await this.admission.admit(principal, tool.schema.admission);
    if (!generation.enter()) {
      release();
      throw new Refusal('family_unavailable', { family: generation.name, reason: 'it is being reloaded; retry' });
    }
    try {
      const input = tool.validateInput(args);
      if (tool.writesWith.some((a) => input[a] === true)) this.refuseWrite(entry, principal);
      const deadline = AbortSignal.timeout(this.callTimeoutMs);
      const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
      const ctx = this.contextFor(entry.generation, principal, signal, options.client);
      const output = await raceAbort(Promise.resolve().then(() => tool.module.handler(input, ctx)), signal, this.callTimeoutMs);
      if (isInputNeeded(output)) return output;
      const problem = tool.checkOutput(output);
      if (problem) throw new Error(`tool ${tool.name} returned output that does not match its outputSchema: ${problem}`);
      const rendered = tool.module.render ? tool.module.render(output) : JSON.stringify(output, null, 2);
      const lag = tool.schema.answersFromIndex ? this.indexLagFor(principal) : undefined;
      const structured = lag ? { ...(output as Record<string, unknown>), index_pending: lag.pending, index_notice: lag.notice } : (output as Record<string, unknown>);
      const text = lag ? withLagNotice(rendered, lag) : rendered;
      const content: ContentBlock[] = [{ type: 'text', text }, ...(tool.module.content?.(output) ?? [])];
      return { content, structuredContent: structured };
    } finally {
      generation.leave();
      release();
    }
  }

  /** Throw why this principal may not write through this tool now (vault, family, credential), if it may not. */
  private refuseWrite(entry: ToolEntry, principal: Principal): void {
    const name = entry.tool.name;
    if (this.registry.vaultReadOnly) throw new Refusal('vault_read_only', { tool: name });
    if (entry.generation.readOnly) throw new Refusal('read_only', { tool: name, who: `the ${entry.generation.name} family` });
    if (!canWrite(principal)) throw new Refusal('read_only', { tool: name, who: `the credential "${principal.name}"` });
  }

  /**
   * Count a protocol request that is not a tool call (a resource subscription) against the caller's
   * rate buckets, so it cannot be sent without bound; refuses as rate_limited like a tool call would.
   */
  async admitRequest(principal: Principal): Promise<void> {
    (await this.admission.admit(principal, 'read'))();
  }

  /** How far the caller's vault index lags, when an index runs and it lags. */
  private indexLagFor(principal: Principal): IndexLag | undefined {
    if (!this.hasService('index')) return undefined;
    return indexLag((this.lookupService('index') as IndexService).status(principal.vaultId));
  }

  /** The ctx handed to a family's handler, prompt or resource reader. */
  contextFor(gen: FamilyGeneration, principal: Principal, signal: AbortSignal, client: ClientChannel = silentChannel): ToolContext {
    const service = <T>(svc: string): T => (gen.provided.has(svc) ? (gen.provided.get(svc) as T) : (this.lookupService(svc) as T));
    return {
      principal,
      vault: this.host.vault(principal.vaultId),
      db: this.host.database.db,
      workers: this.host.workers,
      log: this.host.log,
      server: this.host.server,
      signal,
      settings: gen.settings,
      canWrite: !this.registry.vaultReadOnly && !gen.readOnly && canWrite(principal),
      now: () => new Date(),
      service,
      hasService: (svc) => gen.provided.has(svc) || this.hasService(svc),
      refuse(code, details, message): never {
        throw new Refusal(code, details, message);
      },
      client,
    };
  }

  private toRefusal(e: unknown, tool: string): Refusal {
    if (isRefusal(e)) return e as Refusal;
    const reference = randomUUID().slice(0, 8);
    this.host.log.error({ tool, reference, err: e instanceof Error ? e.stack ?? e.message : String(e) }, 'tool call failed');
    return new Refusal('internal', { reference });
  }
}

function raceAbort<T>(work: Promise<T>, signal: AbortSignal, timeoutMs: number): Promise<T> {
  if (signal.aborted) return Promise.reject(abortRefusal(signal, timeoutMs));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortRefusal(signal, timeoutMs));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

function abortRefusal(signal: AbortSignal, timeoutMs: number): Refusal {
  const reason = signal.reason as { name?: string } | undefined;
  if (reason?.name === 'TimeoutError') return new Refusal('timeout', { timeoutMs });
  return new Refusal('timeout', { timeoutMs }, 'The call was cancelled by the client before it finished.');
}

/** The arguments as the audit row may keep them: the tool's own redaction, or them as given. */
function auditedParams(entry: ToolEntry | undefined, args: unknown): unknown {
  const redact = entry?.tool.module.auditParams;
  if (!redact || typeof args !== 'object' || args === null) return args;
  try {
    return redact(args as Record<string, unknown>);
  } catch {
    return '[redacted]';
  }
}

/**
 * The caveat in a tool's text: the first line of prose, or two more fields of a text that is one JSON
 * object (search and fetch answer connectors that parse their text as JSON).
 */
function withLagNotice(text: string, lag: IndexLag): string {
  if (text.startsWith('{')) {
    try {
      const parsed = JSON.parse(text) as Record<string, unknown>;
      return JSON.stringify({ ...parsed, index_pending: lag.pending, index_notice: lag.notice });
    } catch {
      // not JSON after all: prose it is
    }
  }
  return `${lag.notice}\n${text}`;
}
