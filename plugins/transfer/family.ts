// The transfer family: short-lived capability links (upload, download) redeemed over public /transfer/*
// routes, and server-side import from public URLs. createTransferFamily lets tests inject the resolver,
// connector and clock; the default export uses the real ones. Never reads a token from a URL.
import { defineFamily, pruneVaultTables, type DefinedFamily } from '../../src/sdk/index.js';
import { transferRefusals } from './refusals.js';
import type { TransferTools } from '../../src/generated/transfer/index.js';
import { migrations } from './migrations.js';
import { resolveOptions, type TransferOptions } from './options.js';
import { transferRoutes } from './routes.js';
import { transferSettingsSchema } from './settings.js';
import checkUpload from './tools/check_upload.js';
import importFromUrl from './tools/import_from_url.js';
import requestDownload from './tools/request_download.js';
import requestUpload from './tools/request_upload.js';

export type { TransferOptions } from './options.js';

export function createTransferFamily(options: TransferOptions = {}): DefinedFamily {
  const deps = resolveOptions(options);
  return defineFamily<TransferTools>({
    name: 'transfer',
    refusals: transferRefusals,
    description: 'Upload/download links over /transfer/* and import from public URLs',
    schemas: new URL('../../schemas/transfer/', import.meta.url),
    settings: { transfer: transferSettingsSchema },
    migrations,
    pruneVaults: pruneVaultTables('transfer_links'),
    tools: {
      request_upload: requestUpload(deps),
      check_upload: checkUpload(deps),
      request_download: requestDownload(deps),
      import_from_url: importFromUrl(deps),
    },
    routes: transferRoutes(deps),
  });
}

export default createTransferFamily();
