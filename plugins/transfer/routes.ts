// Public /transfer/* routes: the pages, link info, PUT upload (claim → stream to temp → publish through
// VaultFs) and GET download. Every refused redemption is one identical 404; reasons go to the log only.
// Never reads a token from the URL, never logs one, never publishes a partial body. With several processes
// on one PostgreSQL server a link is redeemed where its vault is owned: the link's row names the vault,
// and the request (its upload body streamed) goes there; the owner checks the token again.
import { readFile } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  createFileObserved,
  isRefusal,
  replaceFileObserved,
  type ChangeOrigin,
  type FamilyRouteContext,
  type FamilyRoutes,
  type WriteScope,
} from '../../src/sdk/index.js';
import { mimeOf } from './mime.js';
import type { TransferDeps } from './options.js';
import { DOWNLOAD_JS, DOWNLOAD_PAGE, UPLOAD_JS, UPLOAD_PAGE } from './pages.js';
import { UploadStop, receiveBody } from './receive.js';
import type { TransferSettings } from './settings.js';
import { LinkStore, type LinkRow } from './store.js';

type Answer = { status: number; body: Record<string, unknown> } | 'not_valid';
const answer = (status: number, body: Record<string, unknown>): Answer => ({ status, body });

/** After a refused or cut-off upload: close the connection once the answer is out, unread bytes and all. */
function closeAfterResponse(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('connection', 'close');
  reply.raw.once('finish', () => request.raw.destroy());
}

export const NOT_VALID_BODY = JSON.stringify({ error: 'This link is not valid. Ask for a new one.' });
const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

/** Fixed one-minute windows per client address and bucket. */
class MinuteLimiter {
  private windowStart = 0;
  private counts = new Map<string, number>();
  take(key: string, limit: number, nowMs: number): boolean {
    if (nowMs - this.windowStart >= 60_000) {
      this.windowStart = nowMs;
      this.counts.clear();
    }
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    return n <= limit;
  }
}

function bearer(request: FastifyRequest): string | undefined {
  const h = request.headers.authorization;
  const m = typeof h === 'string' ? /^Bearer[ \t]+([A-Za-z0-9_-]{1,200})[ \t]*$/i.exec(h) : null;
  return m ? m[1] : undefined;
}

function contentDisposition(p: string): string {
  const name = p.slice(p.lastIndexOf('/') + 1);
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

export function transferRoutes(deps: TransferDeps): FamilyRoutes {
  return {
    prefixes: ['/transfer'],
    async plugin(app: FastifyInstance, opts: { family: FamilyRouteContext }) {
      const fam = opts.family;
      const s = fam.settings.transfer as TransferSettings;
      const store = new LinkStore(fam.db);
      const limiter = new MinuteLimiter();
      let activeUploads = 0;

      // Bodies are read by the upload handler itself, after the claim: no parser may consume them first.
      app.removeAllContentTypeParsers();
      app.addContentTypeParser(
        '*',
        (_request: FastifyRequest, _payload: unknown, done: (err: Error | null, body?: unknown) => void) => done(null),
      );

      app.addHook('onSend', async (_request: FastifyRequest, reply: FastifyReply) => {
        reply.header('cache-control', 'no-store');
        reply.header('referrer-policy', 'no-referrer');
        reply.header('x-content-type-options', 'nosniff');
      });

      const notValid = (reply: FastifyReply, reason: string, row?: LinkRow) => {
        fam.log.info(
          { family: 'transfer', link: row?.id ?? null, kind: row?.kind ?? null, reason },
          'transfer link refused',
        );
        return reply.code(404).type('application/json').send(NOT_VALID_BODY);
      };
      const limited = (request: FastifyRequest, reply: FastifyReply, bucket: 'page' | 'bytes'): boolean => {
        const limit = bucket === 'page' ? s.pageRequestsPerMinute : s.byteRequestsPerMinute;
        if (limiter.take(`${bucket}:${fam.clientAddress(request)}`, limit, Date.now())) return false;
        if (bucket === 'bytes') closeAfterResponse(request, reply);
        void reply
          .code(429)
          .header('retry-after', '60')
          .type('application/json')
          .send({ error: 'Too many requests; wait a minute.' });
        return true;
      };
      /** A usable link for `token`, or the reason it is not (for the log). */
      const usable = async (
        token: string | undefined,
        kind: 'upload' | 'download',
      ): Promise<{ row?: LinkRow; reason?: string }> => {
        if (!token) return { reason: 'no bearer token' };
        const row = await store.byToken(token, kind);
        if (!row) return { reason: 'unknown token' };
        if (row.state !== 'pending') return { row, reason: `link is ${row.state}` };
        const now = deps.now();
        if (row.expiresAt <= now) return { row, reason: 'link expired' };
        if (!(await store.credentialActive(row, now)))
          return { row, reason: 'minting credential revoked, expired or read-only' };
        return { row };
      };

      const page = (html: string) => async (request: FastifyRequest, reply: FastifyReply) => {
        if (limited(request, reply, 'page')) return reply;
        return reply.type('text/html; charset=utf-8').header('content-security-policy', PAGE_CSP).send(html);
      };
      const script = (js: string) => async (_request: FastifyRequest, reply: FastifyReply) =>
        reply.type('text/javascript; charset=utf-8').send(js);
      app.get('/transfer/upload', page(UPLOAD_PAGE));
      app.get('/transfer/download', page(DOWNLOAD_PAGE));
      app.get('/transfer/assets/upload.js', script(UPLOAD_JS));
      app.get('/transfer/assets/download.js', script(DOWNLOAD_JS));

      app.get('/transfer/upload/info', async (request: FastifyRequest, reply: FastifyReply) => {
        if (limited(request, reply, 'page')) return reply;
        const { row, reason } = await usable(bearer(request), 'upload');
        if (!row || reason) return notValid(reply, reason ?? 'unusable', row);
        return reply.send({
          path: row.path,
          max_bytes: row.maxBytes,
          overwrite: row.overwrite,
          expires_at: row.expiresAt.toISOString(),
        });
      });
      app.get('/transfer/download/info', async (request: FastifyRequest, reply: FastifyReply) => {
        if (limited(request, reply, 'page')) return reply;
        const { row, reason } = await usable(bearer(request), 'download');
        if (!row || reason) return notValid(reply, reason ?? 'unusable', row);
        const name = row.path.slice(row.path.lastIndexOf('/') + 1);
        return reply.send({
          path: row.path,
          name,
          size: row.pinned?.size ?? 0,
          mime: mimeOf(row.path),
          expires_at: row.expiresAt.toISOString(),
        });
      });

      app.get('/transfer/download/file', async (request: FastifyRequest, reply: FastifyReply) => {
        if (limited(request, reply, 'bytes')) return reply;
        const { row, reason } = await usable(bearer(request), 'download');
        if (!row || reason) return notValid(reply, reason ?? 'unusable', row);
        if (await fam.routeToOwner(row.vaultId, request, reply, { write: false })) return reply;
        let bytes: Buffer;
        try {
          bytes = await fam.vault(row.vaultId).fs.readBytes(row.path, { maxBytes: row.maxBytes });
        } catch (e) {
          if (isRefusal(e)) return notValid(reply, `file unreadable: ${e.code}`, row);
          throw e;
        }
        if (fam.vault(row.vaultId).fs.contentHash(bytes) !== row.pinned?.hash)
          return notValid(reply, 'file changed since the link was minted', row);
        fam.log.info({ family: 'transfer', link: row.id, bytes: bytes.length }, 'download served');
        return reply
          .type(mimeOf(row.path))
          .header('content-disposition', contentDisposition(row.path))
          .header('content-length', bytes.length)
          .send(bytes);
      });

      app.put('/transfer/upload', async (request: FastifyRequest, reply: FastifyReply) => {
        if (limited(request, reply, 'bytes')) return reply;
        const token = bearer(request);
        if (!token) {
          closeAfterResponse(request, reply);
          return notValid(reply, 'no bearer token');
        }
        // Before a slot or the claim: the owner of the link's vault claims it (an unknown token is refused here).
        const known = await store.byToken(token, 'upload');
        if (known && (await fam.routeToOwner(known.vaultId, request, reply, { write: true }))) return reply;
        if (activeUploads >= s.maxConcurrentUploads) {
          closeAfterResponse(request, reply);
          return reply
            .code(503)
            .header('retry-after', '5')
            .send({ error: `All ${s.maxConcurrentUploads} upload slots are busy; retry shortly.` });
        }
        activeUploads++;
        let outcome: Answer;
        try {
          outcome = await upload(request, reply, token);
        } finally {
          activeUploads--;
        }
        // The slot and the temp file are released before the client hears back.
        return outcome === 'not_valid' ? reply : reply.code(outcome.status).send(outcome.body);
      });

      /** An upload publishes for the credential that minted its link (history and the write observers see that). */
      const publishScope = (row: LinkRow): WriteScope => ({
        services: fam,
        vault: fam.vault(row.vaultId),
        author: {
          origin: { kind: row.principalKind as ChangeOrigin['kind'], id: row.principalId, name: row.principalId },
          tool: 'request_upload',
        },
        now: () => deps.now(),
      });

      const upload = async (request: FastifyRequest, reply: FastifyReply, token: string): Promise<Answer> => {
        const closeAfter = () => closeAfterResponse(request, reply);
        const now = deps.now();
        const row = await store.claim(token, now);
        if (!row) {
          closeAfter();
          const { row: known, reason } = await usable(token, 'upload');
          notValid(reply, reason ?? 'not claimable', known);
          return 'not_valid';
        }
        if (!(await store.credentialActive(row, now))) {
          await store.revoke(row.id);
          closeAfter();
          notValid(reply, 'minting credential revoked, expired or read-only', row);
          return 'not_valid';
        }
        const declared = Number(request.headers['content-length']);
        if (Number.isFinite(declared) && declared > row.maxBytes) {
          await store.release(row.id);
          closeAfter();
          return answer(413, {
            error: `The file is ${declared} bytes, over this link's limit of ${row.maxBytes} bytes. Nothing was published.`,
          });
        }
        const deadline = Math.min(
          row.expiresAt.getTime(),
          (row.claimedAt ?? now).getTime() + s.uploadStreamSeconds * 1000,
        );
        let received;
        try {
          received = await receiveBody(request.raw, row.maxBytes, deadline - deps.now().getTime());
        } catch (e) {
          if (!(e instanceof UploadStop)) {
            await store.release(row.id);
            throw e;
          }
          closeAfter();
          fam.log.info({ family: 'transfer', link: row.id, stop: e.kind }, 'upload stopped');
          if (e.kind === 'timeout') {
            await store.consume(row.id);
            return answer(408, {
              error: 'The upload ran past its deadline and was cut off; nothing was published and the link is used up.',
            });
          }
          await store.release(row.id);
          if (e.kind === 'too_large')
            return answer(413, {
              error: `The upload passed this link's limit of ${row.maxBytes} bytes and was cut off. Nothing was published.`,
            });
          return answer(400, {
            error: 'The upload was interrupted; nothing was published. The link can be used again.',
          });
        }
        try {
          const bytes = await readFile(received.file);
          const fs = fam.vault(row.vaultId).fs;
          try {
            if (row.pinned) {
              const st = await fs.stat(row.path);
              if (
                st.kind !== 'file' ||
                st.ino !== row.pinned.ino ||
                (row.pinned.mountId ?? st.mountId) !== st.mountId ||
                st.size !== row.pinned.size ||
                st.mtimeMs !== row.pinned.mtimeMs
              ) {
                throw Object.assign(
                  new Error(`"${row.path}" changed since the link was minted; nothing was published.`),
                  { conflict: true },
                );
              }
              const refuseStale = (): never => {
                throw Object.assign(
                  new Error(`"${row.path}" changed since the link was minted; nothing was published.`),
                  { conflict: true },
                );
              };
              await replaceFileObserved(
                publishScope(row),
                row.path,
                bytes,
                { expectedHash: row.pinned.hash, maxReadBytes: row.maxBytes, refuseStale },
                fam.log,
              );
            } else {
              await createFileObserved(publishScope(row), row.path, bytes, fam.log);
            }
          } catch (e) {
            const conflict = isRefusal(e) || (e as { conflict?: boolean }).conflict === true;
            await store.release(row.id);
            if (!conflict) throw e;
            fam.log.info(
              { family: 'transfer', link: row.id, reason: isRefusal(e) ? e.code : 'changed' },
              'upload not published',
            );
            return answer(409, { error: isRefusal(e) ? `${e.message} Nothing was published.` : (e as Error).message });
          }
          const result = {
            size: bytes.length,
            sha256: fs.contentHash(bytes).replace(/^sha256:/, ''),
            mime: mimeOf(row.path),
          };
          await store.complete(row.id, deps.now(), result);
          fam.log.info({ family: 'transfer', link: row.id, bytes: bytes.length }, 'upload published');
          return answer(201, { path: row.path, ...result });
        } finally {
          await received.cleanup();
        }
      };

      const methodNotAllowed = (allow: string) => async (_request: FastifyRequest, reply: FastifyReply) =>
        reply.code(405).header('allow', allow).send({ error: 'Method not allowed.' });
      const others = ['POST', 'DELETE', 'PATCH', 'OPTIONS'] as const;
      app.route({ method: [...others], url: '/transfer/upload', handler: methodNotAllowed('GET, HEAD, PUT') });
      app.route({ method: [...others, 'PUT'], url: '/transfer/download', handler: methodNotAllowed('GET, HEAD') });
      app.route({ method: [...others, 'PUT'], url: '/transfer/download/file', handler: methodNotAllowed('GET, HEAD') });
      app.setNotFoundHandler(async (_request: FastifyRequest, reply: FastifyReply) =>
        reply.code(404).type('application/json').send(NOT_VALID_BODY),
      );
    },
  };
}
