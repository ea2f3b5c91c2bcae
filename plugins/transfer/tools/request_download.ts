// request_download: mint a multi-use download link, valid until expiry, bound to the file's bytes now.
// Never writes vault bytes; a link stops working as soon as the file's bytes change.
import type { ToolContext, ToolFor } from '../../../src/sdk/index.js';
import { mimeOf } from '../mime.js';
import { linkLifetime, publicBase } from '../links.js';
import type { TransferDeps } from '../options.js';
import type { TransferCtxSettings } from '../settings.js';
import { LinkStore } from '../store.js';
import type { TransferTools } from '../../../src/generated/transfer/index.js';

export default function requestDownload(deps: TransferDeps): ToolFor<TransferTools['request_download']> {
  return {
    async handler(input, ctx: ToolContext<TransferCtxSettings>) {
      const s = ctx.settings.transfer;
      const base = publicBase(s, ctx.server);
      const fs = ctx.vault.fs;
      const path = fs.checkPath(input.path);
      const st = await fs.stat(path);
      if (st.kind === 'directory') ctx.refuse('is_directory', { path });
      if (st.kind === 'symlink')
        ctx.refuse('is_symlink', { path, target: st.linkInside ? st.linkTarget : '(outside the vault)' });
      const bytes = await fs.readBytes(path, { maxBytes: s.maxDownloadBytes });
      const hash = fs.contentHash(bytes);
      const now = deps.now();
      const life = linkLifetime(input.expires_in, s, ctx.principal, now);
      const store = new LinkStore(ctx.db);
      await store.sweep(now, s.retainDays * 86_400_000);
      const { id, token } = await store.mint({
        kind: 'download',
        vaultId: ctx.vault.id,
        principalKind: ctx.principal.kind,
        principalId: ctx.principal.id,
        path,
        overwrite: false,
        pinned: {
          mountId: st.mountId,
          ino: st.ino,
          size: bytes.length,
          mtimeMs: st.mtimeMs,
          ctimeMs: st.ctimeMs,
          hash,
        },
        maxBytes: bytes.length,
        now,
        expiresAt: life.expiresAt,
      });
      ctx.log.info({ family: 'transfer', download_id: id, path }, 'download link minted');
      const name = path.slice(path.lastIndexOf('/') + 1);
      return {
        download_id: id,
        url: `${base}/transfer/download#${token}`,
        curl: `curl -H "Authorization: Bearer ${token}" -o '${name.replace(/'/g, '')}' ${base}/transfer/download/file`,
        path,
        size: bytes.length,
        mime: mimeOf(path),
        content_hash: hash,
        expires_at: life.expiresAt.toISOString(),
        expires_in: life.seconds,
        note: life.note,
      };
    },
    render(o) {
      return [
        `Download link for ${o.path} (${o.size} bytes, ${o.mime}; works until expiry while the file is unchanged):`,
        o.url,
        `content_hash: ${o.content_hash}`,
        `expires_at: ${o.expires_at} (${o.expires_in} s)`,
        ...(o.note ? [`NOTE: ${o.note}`] : []),
        `From a terminal: ${o.curl}`,
      ].join('\n');
    },
  };
}
