// The vault's non-note files for one tool call: the index holds notes only, so links marked `attachment`
// (they name another kind of file) are resolved here, with the same resolver, against one walk of the vault.
// Read-only: lists paths through ctx.vault.fs and never reads a file's bytes.
import { buildLinkIndex, resolveLink, type LinkIndex, type LinkResolution } from '../../src/markdown/index.js';
import type { ToolContext } from '../../src/sdk/index.js';

export class VaultFiles {
  private index: Promise<{ index: LinkIndex; paths: Set<string> }> | undefined;

  constructor(private readonly ctx: ToolContext<unknown>) {}

  private load(): Promise<{ index: LinkIndex; paths: Set<string> }> {
    this.index ??= (async () => {
      const paths = new Set<string>();
      for await (const e of this.ctx.vault.fs.walk()) {
        if (this.ctx.signal.aborted) break;
        if (e.kind === 'file' && !/\.md$/i.test(e.path)) paths.add(e.path);
      }
      return { index: buildLinkIndex(paths), paths };
    })();
    return this.index;
  }

  /** Resolve an attachment-marked link target written in `fromPath` among the vault's non-note files. */
  async resolve(target: string, fromPath: string): Promise<LinkResolution> {
    return resolveLink(target, fromPath, (await this.load()).index);
  }

  /** Whether a non-note file exists at exactly this path. */
  async has(path: string): Promise<boolean> {
    return (await this.load()).paths.has(path);
  }
}
