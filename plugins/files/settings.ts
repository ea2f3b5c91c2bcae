// The files family's settings (config section `files`): every limit the file tools apply, with defaults.
// Declarations only; handlers read the validated values through ctx.settings.

export interface FilesSettings {
  /** Largest file read_file returns (bytes). */
  readonly maxReadBytes: number;
  /** Largest file write_file accepts after decoding (bytes). */
  readonly maxWriteBytes: number;
  /** Default text window of read_file (characters). */
  readonly textWindowChars: number;
  /** Upper bound on list_files' limit. */
  readonly maxListEntries: number;
}

export type FilesCtxSettings = { files: FilesSettings };

export const filesSettingsSchema = {
  type: 'object',
  properties: {
    maxReadBytes: { type: 'integer', minimum: 1, default: 10 * 1024 * 1024 },
    maxWriteBytes: { type: 'integer', minimum: 1, default: 25 * 1024 * 1024 },
    textWindowChars: { type: 'integer', minimum: 100, default: 100_000 },
    maxListEntries: { type: 'integer', minimum: 1, default: 1000 },
  },
} as const;
