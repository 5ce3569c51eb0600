import type pg from "pg";

/** What the watchdog reads of a pg Client (pg is pinned; the Postgres-silence tests fail if these move). */
interface ClientInternals {
  _getActiveQuery(): object | null | undefined;
  connection?: { stream?: { destroy(error?: Error): void } };
}

/**
 * Drops a pooled connection whose statement has gone unanswered for
 * `timeoutMs`: a connection the network lost without a reset (a failover, a
 * NAT or firewall forgetting the flow) would otherwise hold its statement, and
 * its pool slot, until TCP gives up (~15 minutes). Destroying its socket fails
 * the statement as a cut connection does ("Connection terminated", which
 * isStoreUnavailable recognises), and pg-pool then discards the client.
 *
 * One interval per pool looks at every client's statement in flight (a
 * statement still in flight at two looks `timeoutMs` apart is stalled), where
 * pg's own query_timeout arms a timer and wraps the callback of every
 * statement: under the gateway's 500-task submissions that made its garbage
 * collector work half as hard again, 3% of a PUSH task's CPU (test/bench
 * findings.md). A stalled statement fails between `timeoutMs` and 1.25 ×
 * `timeoutMs` after it was sent.
 */
export function watchStalledStatements(pool: pg.Pool, timeoutMs: number): () => void {
  const seen = new Map<pg.PoolClient, { statement: object | null; since: number }>();
  pool.on("connect", (client) => seen.set(client, { statement: null, since: 0 }));
  pool.on("remove", (client) => seen.delete(client as pg.PoolClient));
  const timer = setInterval(
    () => {
      const now = performance.now();
      for (const [client, last] of seen) {
        const internals = client as unknown as ClientInternals;
        const statement = internals._getActiveQuery() ?? null;
        if (statement === null || statement !== last.statement) {
          last.statement = statement;
          last.since = now;
        } else if (now - last.since >= timeoutMs) {
          seen.delete(client);
          internals.connection?.stream?.destroy(new Error(`Query read timeout: no answer from PostgreSQL in ${timeoutMs} ms`));
        }
      }
    },
    Math.max(100, Math.floor(timeoutMs / 4)),
  );
  timer.unref();
  return () => clearInterval(timer);
}
