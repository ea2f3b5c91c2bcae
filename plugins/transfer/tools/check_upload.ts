// check_upload: where one upload link stands, for the principal that minted it only.
// Read-only; never reveals another principal's link or echoes a malformed id.
import type { ToolContext, ToolFor } from '../../../src/sdk/index.js';
import type { TransferDeps } from '../options.js';
import type { TransferCtxSettings } from '../settings.js';
import { LinkStore } from '../store.js';
import type { TransferTools } from '../../../src/generated/transfer/index.js';

export default function checkUpload(deps: TransferDeps): ToolFor<TransferTools['check_upload']> {
  return {
    async handler(input, ctx: ToolContext<TransferCtxSettings>) {
      const s = ctx.settings.transfer;
      const store = new LinkStore(ctx.db);
      const row = await store.byIdFor(input.upload_id, ctx.principal.id, ctx.vault.id);
      if (!row || row.kind !== 'upload') {
        return {
          upload_id: '(not shown)',
          status: 'not_found',
          message: 'No upload link with that id was minted by this credential.',
        };
      }
      const now = deps.now();
      const base = { upload_id: row.id, path: row.path, expires_at: row.expiresAt.toISOString() };
      switch (row.state) {
        case 'completed': {
          const r = row.result;
          return {
            ...base,
            status: 'completed',
            message: `The upload arrived at ${row.path}.`,
            size: r?.size,
            sha256: r?.sha256,
            mime: r?.mime,
            completed_at: row.completedAt?.toISOString(),
          };
        }
        case 'revoked':
          return {
            ...base,
            status: 'revoked',
            message:
              'The link was revoked (the credential that minted it lost write access or was revoked); nothing was published.',
          };
        case 'consumed':
          return {
            ...base,
            status: 'expired',
            message:
              'The upload was cut short (it ran past its deadline); nothing was published and the link is used up.',
          };
        case 'claimed': {
          const deadline = new Date(
            Math.min(row.expiresAt.getTime(), (row.claimedAt?.getTime() ?? 0) + s.uploadStreamSeconds * 1000),
          );
          if (now < deadline)
            return {
              ...base,
              status: 'uploading',
              deadline: deadline.toISOString(),
              message: `Bytes are arriving; the stream has until ${deadline.toISOString()}.`,
            };
          return {
            ...base,
            status: 'unknown',
            deadline: deadline.toISOString(),
            message:
              'The upload stopped reporting after its deadline; the bytes may already be in the vault. Check the path.',
          };
        }
        default: {
          if (now >= row.expiresAt)
            return {
              ...base,
              status: 'expired',
              message: 'The link expired without being used; nothing was uploaded.',
            };
          if (!(await store.credentialActive(row, now)))
            return {
              ...base,
              status: 'revoked',
              message: 'The credential that minted this link was revoked or lost write access; the link will not work.',
            };
          return {
            ...base,
            status: 'pending',
            message: `Nothing has been uploaded to ${row.path} yet. The link is valid until ${row.expiresAt.toISOString()}.`,
          };
        }
      }
    },
    render(o) {
      const lines = [`${o.status}: ${o.message}`];
      if (o.status === 'completed')
        lines.push(
          `path: ${o.path}`,
          `size: ${o.size} bytes`,
          `sha256: ${o.sha256}`,
          `mime: ${o.mime}`,
          `completed_at: ${o.completed_at}`,
        );
      else if (o.path) lines.push(`path: ${o.path}`, `upload_id: ${o.upload_id}`);
      return lines.join('\n');
    },
  };
}
