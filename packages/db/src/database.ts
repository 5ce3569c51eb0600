import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/prisma/client.js";
import { DeferredOutboxDeletes } from "./outbox/deferred-outbox-deletes.js";
import { poolTypeParsers } from "./pg-timestamps.js";
import { watchStalledStatements } from "./stalled-statements.js";

export { prepared } from "./prepared-statement.js";

/**
 * One pg pool per process, shared by Prisma (the rest of the app) and raw SQL
 * (the hot path: multi-row inserts, claims and transitions, where Prisma's
 * per-row overhead caps throughput near 1.4k tasks/s on this machine class).
 */
export interface Database {
  readonly pool: pg.Pool;
  readonly prisma: PrismaClient;
  /** Fast-path outbox rows waiting to be deleted, gathered; close() sends what is left. */
  readonly dispatchedOutbox: DeferredOutboxDeletes;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  url: string;
  /** Pool size; the default suits a 2-core box with several processes. */
  max?: number;
  applicationName?: string;
  /**
   * A statement not answered within this long fails and its connection is
   * dropped rather than reused: one a silent network holds would otherwise
   * keep its statement, and its pool slot, until TCP gives up
   * (stalled-statements.ts). @defaultValue no limit
   */
  queryTimeoutMs?: number;
}

/**
 * Settings for every session of the pool.
 * - idle_in_transaction_session_timeout 10 s: a process frozen inside a
 *   transaction (SIGSTOP, a VM paused, a debugger) kept its row locks for as
 *   long as it stayed frozen. The scheduler's firing holds its schedules'
 *   rows FOR UPDATE SKIP LOCKED, so a healthy peer skipped them: in QA 20 of
 *   20 every-second schedules fired nothing while one scheduler was stopped.
 *   Ten seconds is far past any transaction here (none waits on more than
 *   Redis, bounded at 2 s) and inside the misfire grace (30 s), so a frozen
 *   peer delays occurrences but loses none.
 * - random_page_cost 1.1: Postgres's default (4) models spinning disks; a
 *   queue's hot tables live in memory, where an index probe costs little more
 *   than a sequential read. With the default, plans cached while `tasks` was
 *   small (a fresh install, or statistics behind a fast-growing table) kept
 *   scanning the whole table for each task of a start or completion.
 * - jit off: every statement here is an OLTP statement of a few ms. When a
 *   misestimate pushed one past the JIT cost threshold it compiled on every
 *   execution: 60 ms for a 16-task start, 2 s for a lease-expiry sweep that
 *   found nothing.
 */
const SESSION_OPTIONS = "-c idle_in_transaction_session_timeout=10s -c random_page_cost=1.1 -c jit=off";

/**
 * The connection string without its own `options`, and the session options:
 * ours, then the URL's, which come later and so win. pg lets `options` in the
 * URL replace the pool's outright, which would silently drop ours.
 */
function sessionConnection(url: string): { connectionString: string; options: string } {
  const parsed = new URL(url);
  const own = parsed.searchParams.get("options");
  if (own === null) return { connectionString: url, options: SESSION_OPTIONS };
  parsed.searchParams.delete("options");
  return { connectionString: parsed.toString(), options: `${SESSION_OPTIONS} ${own}` };
}

export function createDatabase(options: DatabaseOptions): Database {
  const pool = new pg.Pool({
    ...sessionConnection(options.url),
    max: options.max ?? 10,
    application_name: options.applicationName ?? "tasklane",
    // A lost Postgres must surface as an error quickly, not as a hung request.
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    // Our raw SQL's parsers (Prisma's adapter brings its own per query).
    types: poolTypeParsers(),
  });
  // An idle client losing its connection (Postgres restart) must not crash the process.
  pool.on("error", () => undefined);
  // Nor a checked-out one between two queries (a transaction awaiting Redis, a restart
  // mid-request): pg emits 'error' on the client itself, and with no listener that
  // kills the process. The failure still reaches the next query, and pg-pool discards
  // the broken client on release. Found by the chaos suite (PostgreSQL restart).
  pool.on("connect", (client) => client.on("error", () => undefined));
  const stopWatching = options.queryTimeoutMs === undefined ? () => undefined : watchStalledStatements(pool, options.queryTimeoutMs);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  const dispatchedOutbox = new DeferredOutboxDeletes(pool);
  return {
    pool,
    prisma,
    dispatchedOutbox,
    async close() {
      stopWatching();
      await dispatchedOutbox.flush();
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

export type Queryable = Pick<pg.Pool, "query"> | pg.PoolClient;

/**
 * A client for a session of its own, outside the pool (the event relay's
 * lock, the outbox LISTEN): named for operators, a bounded connect, and TCP
 * keepalives so a session behind a dead link fails within seconds instead of
 * the OS default of hours. `extra` adds to these.
 */
export function dedicatedClient(url: string, applicationName: string, extra: pg.ClientConfig = {}): pg.Client {
  return new pg.Client({
    connectionString: url,
    application_name: applicationName,
    connectionTimeoutMillis: 5_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 5_000,
    ...extra,
  });
}

/**
 * withTransaction for a polling loop's claim: `probe` (one autocommit
 * statement, answering a row when there is work) runs first, and only a probe
 * that finds work opens the transaction. An idle poll then costs one round
 * trip instead of three (BEGIN, the empty claim, COMMIT); idle, the control
 * plane's loops ran 25 transactions a second to find nothing. Work committed
 * just after the probe waits for the next poll, as it would have after an
 * empty claim.
 */
export async function withTransactionIfAny<T>(
  pool: pg.Pool,
  probe: pg.QueryConfig,
  idle: T,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const found = await pool.query(probe);
  return found.rowCount === 0 ? idle : withTransaction(pool, fn);
}

/** Runs fn in one transaction on one client; rolls back on any throw. */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let result: T;
  try {
    await client.query("BEGIN");
    result = await fn(client);
    await client.query("COMMIT");
  } catch (error) {
    // A client whose ROLLBACK fails is dropped, not reused: its connection is broken (cut, or dropped by
    // the stalled-statement watchdog), and pg-pool would otherwise hand it out again.
    const rolledBack = await client.query("ROLLBACK").then(
      () => true,
      () => false,
    );
    client.release(!rolledBack);
    throw error;
  }
  client.release();
  return result;
}
