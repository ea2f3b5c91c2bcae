// request_upload: mint a single-use upload link bound to one destination path (token in the fragment).
// Never writes vault bytes; never emits a localhost link; the token is returned once and stored hashed.
import { isRefusal, type ToolContext, type ToolFor } from '../../../src/sdk/index.js';
import { linkLifetime, publicBase } from '../links.js';
import type { TransferDeps } from '../options.js';
import type { TransferCtxSettings } from '../settings.js';
import { LinkStore, type Fingerprint } from '../store.js';
import type { TransferTools } from '../../../src/generated/transfer/index.js';

export default function requestUpload(deps: TransferDeps): ToolFor<TransferTools['request_upload']> {
  return {
    async handler(input, ctx: ToolContext<TransferCtxSettings>) {
      const s = ctx.settings.transfer;
      const base = publicBase(s, ctx.server);
      const fs = ctx.vault.fs;
      const path = fs.checkPath(input.path);
      const overwrite = input.overwrite ?? false;
      const st = await fs.stat(path).catch((e: unknown) => {
        if (isRefusal(e) && e.code === 'not_found') return undefined;
        throw e;
      });
      let pinned: Fingerprint | null = null;
      if (st) {
        if (st.kind === 'directory') ctx.refuse('is_directory', { path });
        if (st.kind === 'symlink')
          ctx.refuse('is_symlink', { path, target: st.linkInside ? st.linkTarget : '(outside the vault)' });
        if (!overwrite)
          ctx.refuse(
            'already_exists',
            { path },
            `"${path}" already exists; nothing was minted. Pass overwrite=true to let the upload replace it.`,
          );
        if (st.size > s.maxDownloadBytes)
          ctx.refuse('precondition_unavailable', { path, size: st.size, limit: s.maxDownloadBytes });
        const bytes = await fs.readBytes(path, { maxBytes: s.maxDownloadBytes });
        pinned = {
          mountId: st.mountId,
          ino: st.ino,
          size: st.size,
          mtimeMs: st.mtimeMs,
          ctimeMs: st.ctimeMs,
          hash: fs.contentHash(bytes),
        };
      }
      const now = deps.now();
      const life = linkLifetime(input.expires_in, s, ctx.principal, now);
      const store = new LinkStore(ctx.db);
      await store.sweep(now, s.retainDays * 86_400_000);
      const { id, token } = await store.mint({
        kind: 'upload',
        vaultId: ctx.vault.id,
        principalKind: ctx.principal.kind,
        principalId: ctx.principal.id,
        path,
        overwrite: pinned !== null,
        pinned,
        maxBytes: s.maxUploadBytes,
        now,
        expiresAt: life.expiresAt,
      });
      ctx.log.info({ family: 'transfer', upload_id: id, path }, 'upload link minted');
      return {
        upload_id: id,
        url: `${base}/transfer/upload#${token}`,
        curl: `curl -H "Authorization: Bearer ${token}" -T <file> ${base}/transfer/upload`,
        path,
        overwrite: pinned !== null,
        max_bytes: s.maxUploadBytes,
        expires_at: life.expiresAt.toISOString(),
        expires_in: life.seconds,
        note: life.note,
      };
    },
    render(o) {
      return [
        `Upload link for ${o.path} (single use${o.overwrite ? ', replaces the current file if unchanged' : ''}):`,
        o.url,
        `upload_id: ${o.upload_id}`,
        `max_bytes: ${o.max_bytes} (transfer.maxUploadBytes)`,
        `expires_at: ${o.expires_at} (${o.expires_in} s)`,
        ...(o.note ? [`NOTE: ${o.note}`] : []),
        `From a terminal: ${o.curl}`,
        'Give the link to the user; call check_upload(upload_id) to see when it has arrived.',
      ].join('\n');
    },
  };
}
