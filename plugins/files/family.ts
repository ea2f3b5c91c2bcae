// The files family: read, write, list and delete non-note vault files (attachments, data, images).
// Every byte goes through ctx.vault.fs; it never creates, deletes or moves notes, and edits them only to
// rewrite links to a file move_file moved.
import { defineFamily, INDEX, optional } from '../../src/sdk/index.js';
import type { FilesTools } from '../../src/generated/files/index.js';
import { filesSettingsSchema } from './settings.js';
import readFile from './tools/read_file.js';
import writeFile from './tools/write_file.js';
import listFiles from './tools/list_files.js';
import deleteFile from './tools/delete_file.js';
import moveFile from './tools/move_file.js';
import { filesRefusals } from './refusals.js';

export default defineFamily<FilesTools>({
  name: 'files',
  refusals: filesRefusals,
  description: 'Attachments and data files: read (text, image, base64), write, list, delete',
  schemas: new URL('../../schemas/files/', import.meta.url),
  settings: { files: filesSettingsSchema },
  tools: {
    read_file: readFile,
    write_file: writeFile,
    list_files: listFiles,
    delete_file: deleteFile,
    move_file: moveFile,
  },
  // move_file rewrites links in notes and tells the index, when one serves.
  requires: [optional(INDEX)],
  // base64 inflates 3 bytes to 4; the rest of the JSON-RPC envelope fits in 64 KiB.
  requestBodyBytes: (settings) =>
    Math.ceil((settings.files as { maxWriteBytes: number }).maxWriteBytes / 3) * 4 + 65536,
});
