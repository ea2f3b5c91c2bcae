// How a command refuses and fails: the native core checked before anything is served, and an error reported
// as one line (an expected refusal) or with its stack (a fault), with the exit status scripts read. Shared by
// program.ts and main.ts's plain `exocortex stdio`, which starts without the command parser.
import { OperationError } from '../host/admin/errors.js';
import { nativeLoadError, nativeRefusal } from '../host/vault/native.js';

/**
 * Refuse before anything is served when the native core cannot load: a server without it would answer
 * `initialize` and then list no tools, which a client shows as empty rather than broken.
 */
export function requireNative(): void {
  const reason = nativeLoadError();
  if (reason === undefined) return;
  process.stderr.write(`exocortex: ${nativeRefusal(reason)}\n`);
  process.exit(2);
}

/** Codes of the refusals a command expects (a locked database, an unsafe socket, no server to reach). */
const EXPECTED = new Set(['database_locked', 'unsafe_admin_socket', 'needs_running_server']);

/** Report `e` on stderr and exit: 2 (or the operation's own status) for a refusal, 1 for a fault. */
export function exitWith(e: unknown): never {
  const err = e as Error | undefined;
  if (e instanceof OperationError) {
    process.stderr.write(`exocortex: ${e.message}\n`);
    process.exit(e.exitCode);
  }
  if (err?.name === 'SettingsError' || EXPECTED.has((e as { code?: unknown } | undefined)?.code as string)) {
    process.stderr.write(`exocortex: ${err?.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`exocortex: ${err?.stack ?? e}\n`);
  process.exit(1);
}
