import type pg from "pg";
import { prepared, withTransaction, withTransactionIfAny, type Database } from "../database.js";
import { mapDispatchRow, type DispatchIntent } from "./dispatch-intent.js";

/** What one drain did: outbox rows claimed, and the tasks of theirs that were still waiting and got enqueued. */
export interface DrainedOutbox {
  rows: number;
  tasks: number;
}

/** Dispatch rows older than the fast path's grace (`minAgeParam`, ms): the probe and the claim test the same thing. */
const dispatchDue = (minAgeParam: string) => `kind = 'DISPATCH_TASK' AND available_at <= now() - ${minAgeParam} * interval '1 millisecond'`;
const ANY_DISPATCH_DUE = `SELECT 1 FROM outbox WHERE ${dispatchDue("$1")} LIMIT 1`;

/**
 * Claims due DISPATCH_TASK outbox rows (SKIP LOCKED, so any number of
 * dispatchers share the work), hands their tasks to `enqueue`, and deletes
 * them in the same transaction only once enqueue resolved. `limit` counts
 * rows; a row lists the tasks of one statement (at most a submission batch).
 * A crash in between leaves the rows for the next claim; the repeat is
 * harmless because the job id is derived from (task id, dispatch generation).
 * Tasks that have moved on (cancelled, already running) are dropped without
 * enqueueing.
 */
export async function drainDispatchOutbox(
  db: Database,
  limit: number,
  minAgeMs: number,
  enqueue: (intents: DispatchIntent[]) => Promise<void>,
): Promise<DrainedOutbox> {
  return withTransactionIfAny(db.pool, prepared(ANY_DISPATCH_DUE, [minAgeMs]), { rows: 0, tasks: 0 }, async (client: pg.PoolClient) => {
    const claimed = await client.query(
      // In (kind, available_at, id) order, the index's: the fast path deletes nearly every row
      // within milliseconds, and a scan in id order would wade through all of them, dead, on every poll.
      `DELETE FROM outbox o WHERE o.id IN (
         SELECT id FROM outbox WHERE ${dispatchDue("$2")}
         ORDER BY available_at, id LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING o.id, o.task_id, o.task_ids`,
      [limit, minAgeMs],
    );
    if (claimed.rowCount === 0) return { rows: 0, tasks: 0 };
    // A row lists the tasks one statement wrote; rows from before that listed one in task_id.
    const taskIds = claimed.rows.flatMap((r) => (r.task_ids as string[] | null) ?? [r.task_id as string]);
    const live = await client.query(
      `SELECT t.id AS task_id, t.tenant_id, t.queue_id, t.priority, t.run_at, t.dispatch_generation, t.trace_parent FROM tasks t
       JOIN queues q ON q.id = t.queue_id
       WHERE t.id = ANY($1::text[]) AND t.status IN ('QUEUED', 'SCHEDULED', 'RETRYING') AND q.mode = 'PUSH'`,
      [taskIds],
    );
    if (live.rows.length) await enqueue(live.rows.map(mapDispatchRow));
    return { rows: claimed.rowCount ?? 0, tasks: live.rows.length };
  });
}

/**
 * Horizon promotion: PUSH tasks that were too far in the future to go to
 * Redis when written, and are now within the horizon. Marks them handed over
 * in the same statement that selects them; the caller enqueues them, and if it
 * dies first the reconciler finds them (due tasks missing from Redis).
 */
export async function takeTasksEnteringHorizon(db: Database, horizonMs: number, limit: number): Promise<DispatchIntent[]> {
  const res = await db.pool.query(
    `UPDATE tasks t SET enqueued_generation = t.dispatch_generation
     FROM (SELECT id FROM tasks
           WHERE enqueued_generation < dispatch_generation AND status IN ('QUEUED', 'SCHEDULED', 'RETRYING')
             AND run_at <= now() + $1 * interval '1 millisecond'
           ORDER BY run_at LIMIT $2 FOR UPDATE SKIP LOCKED) c
     WHERE t.id = c.id
     RETURNING t.id AS task_id, t.tenant_id, t.queue_id, t.priority, t.run_at, t.dispatch_generation, t.trace_parent`,
    [horizonMs, limit],
  );
  return res.rows.map(mapDispatchRow);
}

/** One page of listTasksThatBelongInRedis; `next` (the cursor for the following page) is undefined after the last. */
export interface RedisBoundPage {
  intents: DispatchIntent[];
  next: string | undefined;
}

/**
 * Every PUSH task that should be in Redis now: runnable and handed over, due
 * within the horizon. Keyset-paged by id for the reconciler: each page walks
 * `limit` waiting tasks in id order on their own partial index and reports,
 * per row, whether it belongs in Redis. The conditions stay out of WHERE:
 * there the planner misjudges how many rows pass (a column-to-column
 * comparison, the queue's mode) and sorts the whole table for every page.
 */
export async function listTasksThatBelongInRedis(
  db: Database,
  horizonMs: number,
  afterId: string,
  limit: number,
  /** Walk no further than this id (a sweep pass's end); null: to the last waiting task. */
  upToId: string | null = null,
): Promise<RedisBoundPage> {
  // An ordered index walk that stops after `limit` rows, whatever the statistics say: on a table
  // that grew faster than they did, the planner bitmap-scanned and sorted every waiting task
  // (36 ms instead of 4 ms for a page of 2,000 behind 100,000).
  const res = await withTransaction(db.pool, async (client) => {
    await client.query("SET LOCAL enable_bitmapscan = off; SET LOCAL enable_seqscan = off");
    return client.query(
      `SELECT t.id AS task_id, t.tenant_id, t.queue_id, t.priority, t.run_at, t.dispatch_generation,
         t.enqueued_generation = t.dispatch_generation AND t.run_at <= now() + $1 * interval '1 millisecond'
           AND (SELECT q.mode FROM queues q WHERE q.id = t.queue_id) = 'PUSH' AS belongs
       FROM tasks t WHERE t.status IN ('QUEUED', 'SCHEDULED', 'RETRYING') AND t.id > $2${upToId === null ? "" : " AND t.id <= $4"}
       ORDER BY t.id LIMIT $3`,
      upToId === null ? [horizonMs, afterId, limit] : [horizonMs, afterId, limit, upToId],
    );
  });
  const last = res.rows[res.rows.length - 1] as { task_id: string } | undefined;
  return {
    intents: res.rows.filter((r) => r.belongs === true).map(mapDispatchRow),
    next: res.rows.length >= limit && last ? last.task_id : undefined,
  };
}

/** A PUSH attempt running in a queue or tenant with a concurrency limit: a slot it holds in Redis until its lease ends. */
export interface HeldSlot {
  taskId: string;
  tenantId: string;
  queueId: string;
  leaseExpiresAt: Date;
}

/**
 * The PUSH attempts running now under a queue's or their tenant's concurrency
 * limit (PULL leases count RUNNING tasks in Postgres itself). Read through the
 * RUNNING tasks' own partial index: a few rows, however big the table.
 */
export async function listHeldSlots(db: Database): Promise<HeldSlot[]> {
  const res = await db.pool.query(
    `SELECT t.id, t.tenant_id, t.queue_id, t.lease_expires_at FROM tasks t
     JOIN queues q ON q.id = t.queue_id JOIN tenants tn ON tn.id = t.tenant_id
     WHERE t.status = 'RUNNING' AND t.lease_expires_at > now() AND q.mode = 'PUSH'
       AND (q.concurrency IS NOT NULL OR tn.max_concurrency IS NOT NULL)`,
  );
  return res.rows.map((r) => ({ taskId: r.id as string, tenantId: r.tenant_id as string, queueId: r.queue_id as string, leaseExpiresAt: r.lease_expires_at as Date }));
}
