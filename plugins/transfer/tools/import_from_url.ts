// import_from_url: the server fetches one public URL into the vault (SSRF rules and the guarded fetch in src/sdk/ssrf/).
// Publishes atomically through ctx.vault.fs only after the whole body arrived; never clobbers by default.
import {
  createFileObserved,
  isRefusal,
  replaceFileObserved,
  toolWriteScope,
  type ToolContext,
  type ToolFor,
  type WriteResult,
} from '../../../src/sdk/index.js';
import { ImportError, fetchUrl } from '../../../src/sdk/index.js';
import { mimeOf } from '../mime.js';
import type { TransferDeps } from '../options.js';
import type { TransferCtxSettings } from '../settings.js';
import type { TransferTools } from '../../../src/generated/transfer/index.js';
import { transferRefusals } from '../refusals.js';

export default function importFromUrl(deps: TransferDeps): ToolFor<TransferTools['import_from_url']> {
  return {
    // Usage rows keep only the URL's host: paths and queries can carry tokens.
    auditParams(args) {
      let host = '(unparsable)';
      try {
        host = new URL(String(args.url)).host;
      } catch {
        // keep the placeholder
      }
      return { ...args, url: host };
    },
    async handler(input, ctx: ToolContext<TransferCtxSettings>) {
      const s = ctx.settings.transfer.import;
      const fs = ctx.vault.fs;
      const path = fs.checkPath(input.path);
      const overwrite = input.overwrite ?? false;
      if (!overwrite && (await fs.exists(path)))
        ctx.refuse(
          'already_exists',
          { path },
          `"${path}" already exists; nothing was fetched. Pass overwrite=true to replace it.`,
        );
      let fetched;
      try {
        fetched = await fetchUrl(
          input.url,
          {
            resolver: deps.resolver,
            connector: deps.connector,
            policy: { allowHttp: s.allowHttp, maxUrlLength: s.maxUrlLength, allowLoopbackForTests: deps.allowLoopback },
          },
          {
            maxBytes: s.maxBytes,
            timeoutMs: s.timeoutMs,
            maxRedirects: s.maxRedirects,
            onBytes: (n, total) => ctx.client.progress(n, total, 'bytes received'),
          },
          ctx.signal,
        );
      } catch (e) {
        if (!(e instanceof ImportError)) throw e;
        ctx.log.info({ family: 'transfer', host: e.host, outcome: e.kind }, 'import refused or failed');
        if (e.kind === 'refused') transferRefusals.refuse('url_refused', { rule: e.message, host: e.host });
        if (e.kind === 'too_large')
          ctx.refuse('too_large', {
            path,
            size: e.size ?? s.maxBytes + 1,
            limit: s.maxBytes,
            setting: 'transfer.import.maxBytes',
          });
        transferRefusals.refuse('fetch_failed', { host: e.host ?? '?', reason: e.message });
      }
      let result: WriteResult;
      let created = true;
      const scope = toolWriteScope(ctx);
      if (!overwrite) result = await createFileObserved(scope, path, fetched.bytes, ctx.log);
      else {
        try {
          const refuseStale = (currentHash: string): never => ctx.refuse('stale_precondition', { path, currentHash });
          result = await replaceFileObserved(
            scope,
            path,
            fetched.bytes,
            { maxReadBytes: s.maxBytes, refuseStale },
            ctx.log,
          );
          created = false;
        } catch (e) {
          if (!isRefusal(e) || e.code !== 'not_found') throw e;
          result = await createFileObserved(scope, path, fetched.bytes, ctx.log);
        }
      }
      const ct = fetched.contentType?.split(';')[0].trim().toLowerCase();
      const mime = ct && ct !== 'application/octet-stream' ? ct : mimeOf(path);
      return {
        path: result.path,
        size: result.size,
        content_hash: result.contentHash,
        mime,
        source: fetched.finalUrl,
        redirects: fetched.redirects,
        created,
      };
    },
    render(o) {
      return `Imported ${o.size} bytes to ${o.path}${o.created ? '' : ' (replaced)'}\nsha256: ${o.content_hash.replace(/^sha256:/, '')}\nmime: ${o.mime}\nsource: ${o.source}${o.redirects ? ` (after ${o.redirects} redirect${o.redirects > 1 ? 's' : ''})` : ''}`;
    },
  };
}
