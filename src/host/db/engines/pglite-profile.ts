// Where the PGlite thread's CPU goes, per statement: off unless EXOCORTEX_PGLITE_PROFILE names a file, which the
// thread then rewrites every second with the CPU each statement text has taken so far (bench/writes'
// BENCH_STATEMENTS=1 reads it). The thread is the serial part of a first index; this says which statements make it so.
// Reads the wire messages only to name them: never changes, answers or delays one.
import { readFileSync, writeFileSync } from 'node:fs';
import { isBegin } from './bytes.js';

/** A statement text's totals: CPU milliseconds of this thread, and how many requests it led. */
export interface StatementCost {
  readonly text: string;
  readonly cpuMs: number;
  readonly calls: number;
}

const decoder = new TextDecoder();

/**
 * This thread's CPU time so far, in ms (the scheduler's figure; its resolution is the kernel's tick); NaN where the
 * kernel keeps no such figure, which leaves the profile empty and the statements as they were.
 */
function threadCpuMs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

function cString(bytes: Uint8Array, from: number): [text: string, next: number] {
  const end = bytes.indexOf(0, from);
  const stop = end < 0 ? bytes.length : end;
  return [decoder.decode(bytes.subarray(from, stop)), stop + 1];
}

export class StatementProfile {
  private readonly costs = new Map<string, { cpuMs: number; calls: number }>();
  /** Named statements' texts, from their Parse messages (a Bind names only the statement). */
  private readonly named = new Map<string, string>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly file: string) {
    this.timer = setInterval(() => this.write(), 1000);
    this.timer.unref();
  }

  /** Run one request (a bundle of frontend messages) and charge its CPU to the first statement it carries. */
  async measure<T>(bytes: Uint8Array, run: () => Promise<T>): Promise<T> {
    const text = this.statementOf(bytes);
    const start = threadCpuMs();
    try {
      return await run();
    } finally {
      const spent = threadCpuMs() - start;
      if (!Number.isNaN(spent)) this.charge(text, spent);
    }
  }

  private charge(text: string, cpuMs: number): void {
    const entry = this.costs.get(text) ?? { cpuMs: 0, calls: 0 };
    entry.cpuMs += cpuMs;
    entry.calls++;
    this.costs.set(text, entry);
  }

  /** The totals so far, the costliest first. */
  totals(): StatementCost[] {
    return [...this.costs]
      .map(([text, c]) => ({ text, cpuMs: c.cpuMs, calls: c.calls }))
      .sort((a, b) => b.cpuMs - a.cpuMs);
  }

  stop(): void {
    clearInterval(this.timer);
    this.write();
  }

  private write(): void {
    try {
      writeFileSync(this.file, `${JSON.stringify(this.totals())}\n`);
    } catch {
      // a profile that cannot be written is no reason to disturb the database
    }
  }

  /**
   * The first statement a request carries: a simple query's text (a transaction's `begin` travels with the
   * statement after it, which is named instead), or an extended query's, from its Parse or, for a prepared
   * statement, the Parse that named it earlier. Whitespace runs are one space.
   */
  private statementOf(bytes: Uint8Array): string {
    let at = 0;
    while (at + 5 <= bytes.length) {
      const type = bytes[at]!;
      const length = ((bytes[at + 1]! << 24) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 8) | bytes[at + 4]!) >>> 0;
      const body = at + 5;
      if (type === 0x51 /* Q */) {
        // A held `begin` (pglite-threaded.ts) is charged to the statement that travels with it.
        if (!isBegin(bytes.subarray(at, at + 1 + length))) return normalise(cString(bytes, body)[0]);
      } else if (type === 0x50 /* P */) {
        const [name, next] = cString(bytes, body);
        const [text] = cString(bytes, next);
        if (name) this.named.set(name, text);
        return normalise(text);
      } else if (type === 0x42 /* B */) {
        const [, next] = cString(bytes, body);
        const [statement] = cString(bytes, next);
        return normalise(this.named.get(statement) ?? `(statement ${statement || 'unnamed'})`);
      }
      at += 1 + length;
    }
    return '(other messages)';
  }
}

function normalise(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
