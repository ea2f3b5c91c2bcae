// Audit: one usage_logs row per tool call, buffered and written in batches. Recording never blocks
// or fails a call: a full queue drops the oldest rows and counts them; a failed flush is logged. Each
// batch also folds into the hourly rollups (usage_hourly) in the same statement.
import type { Kysely } from 'kysely';
import type { Logger } from '../../sdk/types.js';
import { textWindow } from '../../sdk/query/page.js';
import { writeBatchSql } from './rollup.js';

/** Most usage rows one statement writes (its parameters are arrays with an element a row: this bounds their size). */
const WRITE_CHUNK = 1000;

export interface UsageRow {
  readonly at: Date;
  readonly vaultId: number | null;
  readonly credentialId: string | null;
  readonly credentialName: string | null;
  readonly tool: string;
  readonly family: string | null;
  readonly params: string;
  readonly durationMs: number;
  readonly responseBytes: number;
  readonly outcome: 'ok' | 'refused' | 'error';
  readonly refusalCode: string | null;
  /** How many results an answer held (its `count`, or its `results` length), when it says. */
  readonly resultCount?: number | null;
}

export interface AuditSettings {
  readonly enabled: boolean;
  readonly paramsMaxChars: number;
  readonly batchSize: number;
  readonly flushIntervalMs: number;
  readonly maxQueue: number;
}

export class AuditWriter {
  private queue: UsageRow[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  dropped = 0;
  written = 0;
  failures = 0;

  constructor(
    private readonly db: Kysely<any>,
    private readonly settings: AuditSettings,
    private readonly log: Logger,
  ) {}

  truncateParams(args: unknown): string {
    let text: string;
    try {
      text = JSON.stringify(args ?? {});
    } catch {
      text = '[unserialisable]';
    }
    const max = this.settings.paramsMaxChars;
    // Never half a surrogate pair before the ellipsis (it reached the database as U+FFFD).
    return text.length > max ? `${max > 1 ? textWindow(text, 0, max - 1).content : ''}…` : text;
  }

  record(row: UsageRow): void {
    if (!this.settings.enabled) return;
    if (this.queue.length >= this.settings.maxQueue) {
      this.queue.shift();
      this.dropped++;
    }
    this.queue.push(row);
    if (this.queue.length >= this.settings.batchSize) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.flush();
      }, this.settings.flushIntervalMs);
      this.timer.unref();
    }
  }

  get pending(): number {
    return this.queue.length;
  }

  async flush(): Promise<void> {
    if (this.flushing) await this.flushing;
    if (this.queue.length === 0) return;
    const batch = this.queue.splice(0, this.settings.batchSize);
    this.flushing = this.write(batch).finally(() => {
      this.flushing = undefined;
    });
    await this.flushing;
    if (this.queue.length >= this.settings.batchSize) await this.flush();
  }

  private async write(batch: UsageRow[]): Promise<void> {
    let done = 0;
    try {
      // The rows and their hourly and daily rollups in one statement per chunk, so a statement stays bounded
      // whatever audit.batchSize says.
      for (; done < batch.length; done += WRITE_CHUNK) {
        const chunk = batch.slice(done, done + WRITE_CHUNK);
        await writeBatchSql(chunk).execute(this.db);
        this.written += chunk.length;
      }
    } catch (e) {
      this.failures++;
      this.dropped += batch.length - done;
      this.log.warn({ err: String(e), rows: batch.length - done }, 'audit flush failed; rows dropped');
    }
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.queue.length > 0 || this.flushing) await this.flush();
  }
}
