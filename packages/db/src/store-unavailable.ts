/**
 * Recognises "the database cannot be reached right now" (PostgreSQL
 * restarting, a connection cut, the pool unable to connect), as opposed to a
 * statement the database answered and refused. Nothing was changed by a
 * statement that failed this way unless it had already committed, and sending
 * it again once the database is back may pass. The gateway answers these as
 * OVERLOADED with retry advice; the PUSH worker keeps an outcome that failed
 * this way and records it again while its lease lasts.
 */

/** SQLSTATE classes: 08 connection exception, 57P operator intervention (shutdown, cannot connect now), 53300 too many connections. */
const UNAVAILABLE_SQLSTATE = /^(08|57P)|^53300$/;
const UNAVAILABLE_NODE_CODES: ReadonlySet<string> = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH"]);
/** Prisma: can't reach the server, timed out reaching it, server closed the connection. */
const UNAVAILABLE_PRISMA_CODES: ReadonlySet<string> = new Set(["P1001", "P1002", "P1017"]);
/** Prisma driver adapter error kinds (meta.driverAdapterError.cause.kind). */
const UNAVAILABLE_ADAPTER_KINDS: ReadonlySet<string> = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TooManyConnections"]);
/**
 * pg and pg-pool report these without a code. "Query read timeout" is the
 * stalled-statement watchdog's (DatabaseOptions.queryTimeoutMs, which drops
 * the connection; the statement may then also fail as "Connection
 * terminated"), or pg's own query_timeout: no answer on a connection
 * the network lost without a reset; like a cut connection, the statement may
 * or may not have committed, and a retry on a new connection may pass.
 */
const UNAVAILABLE_MESSAGE = /Connection terminated|timeout exceeded when trying to connect|Query read timeout|not queryable|the database system is (shutting down|starting up|in recovery mode)/i;

function codeOf(error: object): unknown {
  return "code" in error ? error.code : undefined;
}

/** The next error down: a wrapper's original error (GraphQL's originalError), Error.cause, or Prisma's driver adapter error. */
function inner(error: object): unknown {
  if ("originalError" in error && error.originalError !== undefined && error.originalError !== null) return error.originalError;
  if ("cause" in error && error.cause !== undefined) return error.cause;
  const meta = "meta" in error ? (error.meta as { driverAdapterError?: unknown } | undefined) : undefined;
  return meta?.driverAdapterError;
}

export function isStoreUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    const code = codeOf(current);
    if (typeof code === "string" && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_NODE_CODES.has(code) || UNAVAILABLE_PRISMA_CODES.has(code))) return true;
    const kind = "kind" in current ? current.kind : undefined;
    if (typeof kind === "string" && UNAVAILABLE_ADAPTER_KINDS.has(kind)) return true;
    if (current instanceof Error && UNAVAILABLE_MESSAGE.test(current.message)) return true;
    if (current instanceof AggregateError && current.errors.some((e) => isStoreUnavailable(e))) return true;
    current = inner(current);
  }
  return false;
}
