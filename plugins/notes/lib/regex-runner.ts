// Runs a regex replace on a throwaway worker thread with a hard deadline: a catastrophic pattern costs
// one terminated thread, never the event loop. The worker gets only the text and the pattern; no I/O.
import { Worker } from 'node:worker_threads';
import { Refusal } from '../../../src/sdk/index.js';
import { regexReplace, type RegexReplacePayload, type RegexReplaceResult } from '../edits/regex-worker.js';
import { notesRefusals } from '../refusals.js';

// The function's own (already compiled) source, so the thread needs no module loader or TS support.
const SOURCE = `const { parentPort, workerData } = require('node:worker_threads');
const regexReplace = ${regexReplace.toString()};
try { parentPort.postMessage({ ok: true, result: regexReplace(workerData) }); }
catch (e) { parentPort.postMessage({ ok: false, message: String(e && e.message || e) }); }`;

export function runRegexReplace(
  payload: RegexReplacePayload,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<RegexReplaceResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(SOURCE, {
      eval: true,
      workerData: payload,
      resourceLimits: { maxOldGenerationSizeMb: 256 },
    });
    let settled = false;
    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      void worker.terminate();
      fn();
    };
    const timer = setTimeout(
      () => finish(() => reject(notesRefusals.refusal('regex_timeout', { timeoutMs }))),
      timeoutMs,
    );
    const onAbort = (): void => finish(() => reject(new Refusal('timeout', { timeoutMs })));
    signal.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (m: { ok: boolean; result?: RegexReplaceResult; message?: string }) =>
      finish(() =>
        m.ok && m.result
          ? resolve(m.result)
          : reject(
              new Refusal('invalid_arguments', {
                problems: `the regular expression failed: ${(m.message ?? '').slice(0, 120)}`,
              }),
            ),
      ),
    );
    worker.once('error', (e) => finish(() => reject(e)));
  });
}
