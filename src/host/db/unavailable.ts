// Whether an error means the database could not be reached or the connection died under a call (a server
// restart, a failover, a cut network), as opposed to a statement the database refused. Callers answer such
// an error with a retryable refusal (the call may succeed in a moment) instead of an internal error.
import { Refusal } from '../../sdk/refusals.js';

/** node-postgres's own messages for a connection that ended or never opened. */
const LOST = [
  'Connection terminated unexpectedly',
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
  'Query read timeout',
];

/** Socket errors of a connection that could not be made or was reset. */
const SOCKET = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTCONN',
  'ECONNABORTED',
]);

/**
 * True for a lost or refused database connection: a socket error, node-postgres's "Connection
 * terminated" family, SQLSTATE class 08 (connection exception), 57P01–57P03 (the server shutting down,
 * crashed, or still starting up).
 */
export function isDatabaseUnavailable(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (SOCKET.has(code)) return true;
    if (/^08[0-9A-Z]{3}$/.test(code) || code === '57P01' || code === '57P02' || code === '57P03') return true;
  }
  if (LOST.includes(e.message)) return true;
  // An AggregateError of failed connection attempts (several addresses for one host name).
  const errors = (e as { errors?: unknown }).errors;
  return Array.isArray(errors) && errors.length > 0 && errors.every(isDatabaseUnavailable);
}

/**
 * The refusal a call gets when its database connection failed: retryable, and it says a write may have
 * landed (the commit may have reached the server before the connection dropped).
 */
export function databaseUnavailable(): Refusal {
  return new Refusal('service_unavailable', {
    service: 'database',
    reason:
      'the connection to PostgreSQL failed during this call (a restart or failover); retry in a moment, and read before writing again, since a write may have landed',
  });
}
