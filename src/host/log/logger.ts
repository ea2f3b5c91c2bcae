// The process logger: JSON lines on stderr (stdout stays clean for stdio MCP and CLI output).
import { pino } from 'pino';
import type { Logger } from '../../sdk/types.js';

export function createLogger(level: string): Logger & { flush?: () => void } {
  return pino(
    { level, base: { svc: 'exocortex' }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination({ dest: 2, sync: true }),
  );
}
