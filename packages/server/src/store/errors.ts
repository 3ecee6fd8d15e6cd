/** True when an insert or update broke a UNIQUE constraint, on either dialect. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/**
 * How long a client is asked to wait after a 503 `unavailable` (the
 * Retry-After header and `retry_after_seconds`). A PostgreSQL restart or a
 * SQLite lock held by another program (a backup, the sqlite3 shell) usually
 * lasts a few seconds; a retry sooner mostly meets the same outage.
 */
export const STORE_RETRY_AFTER_SECONDS = 5;

/**
 * SQLSTATEs of a server that is going away, not up yet or full, all of
 * which end by themselves: admin_shutdown (a restart or
 * pg_terminate_backend), crash_shutdown, cannot_connect_now (starting up or
 * shutting down), too_many_connections. Class 08 (connection exception) is
 * matched by its prefix.
 */
const PG_UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);

/**
 * Socket failures on the way to PostgreSQL: nothing listening (restarting),
 * the connection cut, a host or its name briefly unreachable (a container
 * being recreated takes its DNS name with it).
 */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);

/** What node-postgres (client and pool) says, without a code, when the connection is lost or cannot be had in time. */
const PG_CONNECTION_MESSAGES = new Set([
  'Connection terminated unexpectedly',
  'Connection terminated due to connection timeout',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
]);

/**
 * True when a store error means "the store is unreachable for now, retry",
 * not "this request or this code is wrong": the 503 `unavailable` cases.
 *
 * - PostgreSQL: the connection refused, cut or timed out; the pool unable to
 *   connect in time; the server shutting down, starting up or out of
 *   connection slots.
 * - SQLite: the database is locked by another connection beyond the busy
 *   timeout (SQLITE_BUSY and its extended codes, SQLITE_LOCKED).
 *
 * Not included, so they stay 500 and are logged as errors: SQLITE_IOERR,
 * SQLITE_FULL, SQLITE_CORRUPT and the like (a disk that fails or is full
 * needs an operator; it does not come back by itself), serialization
 * failures and deadlocks, and a store this process has closed itself.
 *
 * Socket codes are taken from the error itself (or the attempts of an
 * AggregateError, as Node reports a host with several addresses), never from
 * a `cause`, so an outbound fetch that fails is not mistaken for the store.
 */
export function isStoreUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return true;
    if (PG_UNAVAILABLE_STATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
    if (SOCKET_CODES.has(code)) return true;
  }
  if (typeof message === 'string' && PG_CONNECTION_MESSAGES.has(message)) return true;
  if (error instanceof AggregateError) return error.errors.length > 0 && error.errors.every(isStoreUnavailable);
  return false;
}
