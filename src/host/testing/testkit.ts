// The test kit for family authors (`exocortex/testkit`): start a real Exocortex host with your family
// loaded by path, connect the MCP SDK client, and assert on refusals. It is the host's side of the
// package, beside the SDK rather than in it: a family's code imports `exocortex/sdk`, its tests this.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { parseRefusalLine } from '../../sdk/refusals.js';
import { startTestServer } from './harness.js';

export interface FamilyTestServer {
  readonly url: string;
  readonly vaultDir: string;
  readonly key: string;
  readonly readKey: string;
  connect(options?: { key?: string }): Promise<Client>;
  rewriteConfig(raw: Record<string, unknown>): Promise<void>;
  close(): Promise<void>;
}

export interface FamilyTestOptions {
  /** Paths (or package names) of the families under test. */
  readonly families: readonly string[];
  /** Extra config (family sections, families.<name>.readOnly …). */
  readonly config?: Record<string, unknown>;
  readonly files?: Record<string, string | Uint8Array>;
  /** Also load Exocortex's built-in families (default false: only yours). */
  readonly withBuiltins?: boolean;
  /** Packages to install beside the config (name → package folder), so `families` can name them as a user would. */
  readonly packages?: Record<string, string>;
}

export async function startFamilyTestServer(options: FamilyTestOptions): Promise<FamilyTestServer> {
  return startTestServer({
    config: { plugins: [...options.families], ...(options.config ?? {}) },
    files: options.files,
    builtinDir: options.withBuiltins ? undefined : null,
    packages: options.packages,
  });
}

/** The refusal contract of a tool result, or undefined when the result is not a refusal. */
export function refusalOf(
  value: unknown,
): ({ code: string; retryable: boolean } & Record<string, unknown>) | undefined {
  const result = value as { isError?: boolean; content?: unknown };
  if (!result?.isError || !Array.isArray(result.content)) return undefined;
  const text = result.content
    .filter((c: { type?: string }) => c.type === 'text')
    .map((c: { text: string }) => c.text)
    .join('\n');
  return parseRefusalLine(text);
}

/** The text of a tool result's content blocks. */
export function textOf(value: unknown): string {
  const result = value as { content?: unknown };
  if (!Array.isArray(result?.content)) return '';
  return result.content
    .filter((c: { type?: string }) => c.type === 'text')
    .map((c: { text: string }) => c.text)
    .join('\n');
}
