// The request path for one tool call, transport-agnostic: find the tool, check write permission,
// admit, validate arguments, run the handler under a deadline, check the output, fit the result to the
// token budget, render, audit. Expected failures become refusal results; thrown bugs become `internal`
// refusals with a reference.
import { randomUUID } from 'node:crypto';
import { indexLag, type IndexLag, type IndexService } from '../../sdk/index-service.js';
import { Refusal, isRefusal } from '../../sdk/refusals.js';
import { refusalToolResult } from '../refusal-presenter.js';
import { databaseUnavailable, isDatabaseUnavailable } from '../db/unavailable.js';
import { budgetFields, budgetSentence, fitToBudget, type BudgetCut } from '../../sdk/result-budget.js';
import type { ContentBlock, Principal, ToolContext } from '../../sdk/types.js';
import { isInputNeeded, silentChannel, type ClientChannel, type InputNeeded } from '../../sdk/client-channel.js';
import type { Admission } from '../admission/index.js';
import type { AuditWriter } from '../audit/batch-writer.js';
import type { HostServices } from './host-services.js';
import type { FamilyGeneration } from './generation.js';
import { canRead, canWrite, type FamilyRegistry, type ToolEntry } from './registry.js';
import { CallDeadline } from './call-deadline.js';
import { scopeNeeded } from '../../sdk/scopes.js';

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

/** The host's tools settings section the dispatcher applies to every call. */
export interface ToolCallSettings {
  readonly callTimeoutMs: number;
  readonly maxResultTokens: number;
}

const BUDGET_SETTING = 'tools.maxResultTokens';

export class ToolDispatcher {
  /** Told of every call answered (the host's metrics): tool, seconds, outcome, refusal code. */
  onCall:
    | ((tool: string, seconds: number, outcome: 'ok' | 'refused' | 'error', refusalCode: string | null) => void)
    | undefined;

  constructor(
    private readonly registry: FamilyRegistry,
    private readonly admission: Admission,
    private readonly audit: AuditWriter,
    private readonly host: HostServices,
    private readonly settings: ToolCallSettings,
    private readonly lookupService: (name: string) => unknown,
    private readonly hasService: (name: string) => boolean,
  ) {}

  /** A tool's result, or the input it needs from the client first (see `inputNeeded` in the SDK). */
  async call(
    principal: Principal,
    name: string,
    args: unknown,
    options: DispatchOptions = {},
  ): Promise<CallResult | InputNeeded> {
    const started = performance.now();
    let entry: ToolEntry | undefined;
    let result: CallResult | InputNeeded;
    let outcome: 'ok' | 'refused' | 'error' = 'ok';
    let refusalCode: string | null = null;
    try {
      entry = this.registry.findTool(name);
      if (!entry || !this.registry.inProfile(entry)) throw new Refusal('unknown_tool', { tool: name });
      if (!canRead(principal, entry.generation.name)) {
        throw new Refusal('forbidden', {
          reason: `its scopes do not reach the ${entry.generation.name} family, which ${name} belongs to (it needs ${scopeNeeded(entry.generation.name, false)})`,
        });
      }
      if (entry.tool.writes) this.refuseWrite(entry, principal);
      if (principal.expiresAt !== undefined && principal.expiresAt <= Date.now())
        throw new Refusal('unauthenticated', {}, 'This credential has expired.');
      const unavailable = this.registry.unavailable(entry);
      if (unavailable) throw new Refusal('service_unavailable', unavailable);
      result = await this.run(entry, principal, args, options);
    } catch (e) {
      const refusal = this.toRefusal(e, name);
      outcome = refusal.code === 'internal' ? 'error' : 'refused';
      refusalCode = refusal.code;
      result = refusalToolResult(refusal);
      options.client?.log(refusal.code === 'internal' ? 'error' : 'warning', {
        tool: name,
        refusal: refusal.code,
        message: refusal.message,
      });
    }
    this.onCall?.(entry?.tool.name ?? 'unknown', (performance.now() - started) / 1000, outcome, refusalCode);
    const responseBytes = isInputNeeded(result)
      ? 0
      : result.content.reduce(
          (n, c) => n + (c.type === 'text' ? Buffer.byteLength(c.text) : c.type === 'image' ? c.data.length : 0),
          0,
        );
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
      resultCount: isInputNeeded(result) ? null : resultCountOf(result.structuredContent),
    });
    return result;
  }

  private async run(
    entry: ToolEntry,
    principal: Principal,
    args: unknown,
    options: DispatchOptions,
  ): Promise<CallResult | InputNeeded> {
    const { tool, generation } = entry;
    this.admission.screen(args);
    const release = await this.admission.admit(principal, tool.schema.admission);
    if (!generation.enter()) {
      release();
      throw new Refusal('family_unavailable', { family: generation.name, reason: 'it is being reloaded; retry' });
    }
    let deadline: CallDeadline | undefined;
    try {
      const input = tool.validateInput(args);
      if (tool.writesWith.some((a) => input[a] === true)) this.refuseWrite(entry, principal);
      const timeoutMs = this.settings.callTimeoutMs;
      const call = (deadline = new CallDeadline(timeoutMs, options.signal));
      const ctx = this.contextFor(entry.generation, principal, () => call.signal, options.client, tool.name);
      const handle = async (args: Record<string, unknown>): Promise<unknown> => {
        const output = await call.race(Promise.resolve().then(() => tool.module.handler(args, ctx)));
        if (isInputNeeded(output)) return output;
        const problem = tool.checkOutput(output);
        if (problem)
          throw new Error(`tool ${tool.name} returned output that does not match its outputSchema: ${problem}`);
        return output;
      };
      const first = await handle(input);
      if (isInputNeeded(first)) return first;
      const lag = tool.schema.answersFromIndex ? this.indexLagFor(principal) : undefined;
      const limitName = tool.module.paging?.limit ?? 'limit';
      let last: { output: unknown; cut: BudgetCut | undefined; result: CallResult } | undefined;
      const present = (output: unknown, cut: BudgetCut | undefined): CallResult => {
        if (last && last.output === output && last.cut === cut) return last.result;
        const result = presentResult(tool.module, output, lag, cut && { cut, limitName });
        last = { output, cut, result };
        return result;
      };
      const budget = this.settings.maxResultTokens;
      const fit = await fitToBudget({
        budget,
        paging: tool.module.paging,
        input,
        output: first,
        run: handle,
        measure: (output, _input, cut) => ({ texts: countedTexts(present(output, cut)) }),
        count: (texts, exact) => this.countTokens(texts, exact, call.signal),
        tool: tool.name,
        setting: BUDGET_SETTING,
      });
      if (!fit.fits) {
        const hint = !tool.module.paging
          ? 'ask for less (a smaller limit, a folder, fewer paths, one section)'
          : `even ${limitName}=1 is over it; ask for less (a section, fewer fields), or the operator can raise ${BUDGET_SETTING}`;
        throw new Refusal('result_too_large', {
          tool: tool.name,
          tokens: fit.tokens,
          budget,
          setting: BUDGET_SETTING,
          hint,
        });
      }
      return present(fit.output, fit.cut);
    } finally {
      deadline?.end();
      generation.leave();
      release();
    }
  }

  /** Throw why this principal may not write through this tool now (vault, family, credential), if it may not. */
  private refuseWrite(entry: ToolEntry, principal: Principal): void {
    const name = entry.tool.name;
    if (this.registry.vaultReadOnly) throw new Refusal('vault_read_only', { tool: name });
    if (entry.generation.readOnly)
      throw new Refusal('read_only', { tool: name, who: `the ${entry.generation.name} family` });
    if (!canWrite(principal, entry.generation.name)) {
      // Name the scope the call needs, not "read-only": a `read tasks:write` key writes tasks (issue 43).
      const scope = scopeNeeded(entry.generation.name, true);
      throw new Refusal(
        'read_only',
        { tool: name, who: `the credential "${principal.name}"`, scope, family: entry.generation.name },
        `The tool "${name}" writes through the ${entry.generation.name} family, which needs the scope ${scope} (or readwrite); the credential "${principal.name}" has ${principal.scopes.join(' ') || 'no scope'}.`,
      );
    }
  }

  /**
   * Count a protocol request that is not a tool call (a resource subscription) against the caller's
   * rate buckets, so it cannot be sent without bound; refuses as rate_limited like a tool call would.
   */
  async admitRequest(principal: Principal): Promise<void> {
    (await this.admission.admit(principal, 'read'))();
  }

  /** Token counts of a result's texts, summed, in the worker pool: at or above cl100k's when `exact`, else sampled. */
  private async countTokens(texts: readonly string[], exact: boolean, signal: AbortSignal): Promise<number> {
    const counts = await this.host.workers.run<number[]>(
      exact ? 'count-tokens-bound' : 'count-tokens',
      { texts },
      { signal },
    );
    return counts.reduce((n, c) => n + c, 0);
  }

  /** How far the caller's vault index lags, when an index runs and it lags. */
  private indexLagFor(principal: Principal): IndexLag | undefined {
    if (!this.hasService('index')) return undefined;
    return indexLag((this.lookupService('index') as IndexService).status(principal.vaultId));
  }

  /**
   * The ctx handed to a family's handler, prompt or resource reader. A tool call's signal is made when the
   * handler first reads it (most never do, and an AbortSignal is a tenth of a small call's cost).
   */
  contextFor(
    gen: FamilyGeneration,
    principal: Principal,
    signal: AbortSignal | (() => AbortSignal),
    client: ClientChannel = silentChannel,
    tool?: string,
  ): ToolContext {
    const vault = this.host.vault(principal.vaultId);
    const { service, hasService } = gen.services(gen.callScope(principal, vault));
    const lazy = typeof signal === 'function';
    const ctx = {
      principal,
      vault,
      db: this.host.database.db,
      workers: this.host.workers,
      log: this.host.log,
      server: this.host.server,
      ...(lazy ? {} : { signal }),
      settings: gen.settings,
      canWrite: !this.registry.vaultReadOnly && !gen.readOnly && canWrite(principal, gen.name),
      now: () => new Date(),
      service,
      hasService,
      refuse(code, details, message): never {
        throw new Refusal(code, details, message);
      },
      client,
      ...(tool !== undefined ? { tool } : {}),
    } as ToolContext;
    if (lazy) Object.defineProperty(ctx, 'signal', { get: signal, enumerable: true, configurable: true });
    return ctx;
  }

  private toRefusal(e: unknown, tool: string): Refusal {
    if (isRefusal(e)) return e as Refusal;
    // The database went away under the call (a restart, a failover): retryable, not a bug.
    if (isDatabaseUnavailable(e)) {
      this.host.log.warn({ tool, err: (e as Error).message }, 'tool call failed: the database connection failed');
      return databaseUnavailable();
    }
    const reference = randomUUID().slice(0, 8);
    this.host.log.error(
      { tool, reference, err: e instanceof Error ? (e.stack ?? e.message) : String(e) },
      'tool call failed',
    );
    return new Refusal('internal', { reference });
  }
}

/** The result as the client gets it: text (with the lag caveat and the cut notice), extra blocks, structuredContent. */
function presentResult(
  module: ToolEntry['tool']['module'],
  output: unknown,
  lag: IndexLag | undefined,
  cut: { cut: BudgetCut; limitName: string } | undefined,
): CallResult {
  const rendered = module.render ? module.render(output) : JSON.stringify(output, null, 2);
  const notice = cut ? budgetFields(cut.cut, cut.limitName) : undefined;
  const structured = {
    ...(output as Record<string, unknown>),
    ...(lag ? { index_pending: lag.pending, index_notice: lag.notice } : {}),
    ...notice,
  };
  let text = lag ? withLagNotice(rendered, lag) : rendered;
  if (cut && notice) text = withBudgetNotice(text, notice, budgetSentence(cut.cut, cut.limitName));
  const content: ContentBlock[] = [{ type: 'text', text }, ...(module.content?.(output) ?? [])];
  return { content, structuredContent: structured };
}

/**
 * What of a result a model may read, each counted against the budget: the text blocks, embedded resources,
 * and structuredContent as the JSON it travels as. Image blocks are left out: clients turn them into image
 * tokens by their pixels, not their base64.
 */
function countedTexts(result: CallResult): string[] {
  const texts: string[] = [];
  for (const c of result.content) {
    if (c.type === 'text') texts.push(c.text);
    else if (c.type === 'resource') texts.push(c.resource.text ?? c.resource.blob ?? '');
  }
  if (result.structuredContent) texts.push(JSON.stringify(result.structuredContent));
  return texts;
}

/** The cut notice in a tool's text: two more fields of a text that is one JSON object, else a last paragraph. */
function withBudgetNotice(text: string, fields: Record<string, unknown>, sentence: string): string {
  if (text.startsWith('{')) {
    try {
      return JSON.stringify({ ...(JSON.parse(text) as Record<string, unknown>), ...fields });
    } catch {
      // not JSON after all: prose it is
    }
  }
  return `${text}\n\n${sentence}`;
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

/** A result's size as its output says it (`count`, else the length of `results`), for the audit row; null when it says neither. */
function resultCountOf(structured: Record<string, unknown> | undefined): number | null {
  if (!structured) return null;
  if (typeof structured.count === 'number' && Number.isInteger(structured.count)) return structured.count;
  if (Array.isArray(structured.results)) return structured.results.length;
  return null;
}
