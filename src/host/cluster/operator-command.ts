// One try of an admin-channel operator command at the vault's owner: the signed operator assertion sent,
// the owner's NDJSON answer relayed line by line, and every way it can fail told as one {error} line.
// It never picks the owner or waits for one: the Forwarder retries it through a failover.
import http from 'node:http';
import { type HopContext, NOT_OWNER_HEADER } from './forward-request.js';

/** The longest line of an operator command's answer relayed (a summary is a few KiB). */
const MAX_COMMAND_LINE = 1 << 20;

/** One try of an operator command at the owner; 'retry' when it never reached a process owning the vault. */
export function commandAtOwner(
  ctx: HopContext,
  base: string,
  path: string,
  payload: Buffer,
  vaultId: number,
  started: number,
  onLine: (line: Record<string, unknown>) => void,
  signal: AbortSignal | undefined,
): Promise<'done' | 'retry'> {
  const target = new URL(path, base);
  const headers: http.OutgoingHttpHeaders = {
    host: target.host,
    'content-type': 'application/json',
    'content-length': String(payload.length),
    ...ctx.hopHeaders('\n', `operator:${vaultId}`, ''),
  };
  const failed = (message: string) => {
    ctx.counts.failed++;
    ctx.metrics?.forwarded((performance.now() - started) / 1000, 'failed');
    onLine({ error: { code: 'forward_failed', message, exitCode: 1 } });
  };
  return new Promise((resolve) => {
    let settled = false;
    const settle = (how: 'done' | 'retry') => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', abort);
      resolve(how);
    };
    const upstream = http.request(target, { method: 'POST', headers, agent: ctx.agent }, (res) => {
      if (res.statusCode === 503 && res.headers[NOT_OWNER_HEADER]) {
        res.resume();
        void ctx.leases.ownerOf(vaultId, true).catch(() => undefined);
        return settle('retry');
      }
      let buffered = '';
      let ended = false;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffered += chunk;
        if (res.statusCode !== 200) {
          if (buffered.length > MAX_COMMAND_LINE) res.destroy();
          return;
        }
        for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          const event = parseLine(line);
          if (!event) continue;
          if ('done' in event || 'error' in event) ended = true;
          onLine(event);
        }
        // One line past the bound is not an answer of an admin command: cut it rather than buffer it.
        if (buffered.length > MAX_COMMAND_LINE) res.destroy();
      });
      res.on('end', () => {
        const last = res.statusCode === 200 ? parseLine(buffered) : undefined;
        if (last) {
          if ('done' in last || 'error' in last) ended = true;
          onLine(last);
        }
        if (res.statusCode !== 200)
          failed(`the vault owner refused the command (${res.statusCode}): ${errorText(buffered)}`);
        else if (!ended) failed('the vault owner process ended its answer before the command finished; run it again');
        else {
          ctx.counts.forwarded++;
          ctx.metrics?.forwarded((performance.now() - started) / 1000, 'ok');
        }
        settle('done');
      });
      res.on('close', () => {
        if (res.complete || settled) return;
        failed('The vault owner process failed while answering; run the command again');
        settle('done');
      });
      res.on('error', () => undefined);
    });
    const abort = () => upstream.destroy();
    signal?.addEventListener('abort', abort, { once: true });
    upstream.on('error', (e: NodeJS.ErrnoException) => {
      void ctx.leases.ownerOf(vaultId, true).catch(() => undefined);
      if (settled) return;
      // Refused: nothing reached the owner (it died or has not started listening); try the next one.
      if (e.code === 'ECONNREFUSED' && !signal?.aborted) return settle('retry');
      ctx.log.warn({ vault: vaultId, owner: base, err: e.message }, 'operator command at the vault owner failed');
      failed('The vault owner process failed while answering; run the command again');
      settle('done');
    });
    upstream.end(payload);
  });
}

/** One line of an operator command's NDJSON answer (undefined for a blank or malformed one). */
function parseLine(line: string): Record<string, unknown> | undefined {
  if (!line.trim()) return undefined;
  try {
    const v = JSON.parse(line) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The message of a refusal's JSON body ({error: {message}} or {error: "…"}), else its first 200 characters. */
function errorText(body: string): string {
  try {
    const e = (JSON.parse(body) as { error?: { message?: string } | string }).error;
    const m = typeof e === 'string' ? e : e?.message;
    if (m) return m;
  } catch {}
  return body.slice(0, 200);
}
