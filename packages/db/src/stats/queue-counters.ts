/**
 * Reads and upkeep of queue_counters (tasks per queue and status, kept by the
 * triggers of migration queue_counters). A count is the sum of its rows: one
 * per database session that changed it, plus the folded base row (slot 0).
 */
import type { TaskStatus } from "@tasklane/core";
import type { Queryable } from "../database.js";
import { firstInWaitingLanes } from "../tasks/waiting-lanes.js";

export interface QueueStatusCount {
  queueId: string;
  status: TaskStatus;
  tasks: number;
}

/** Tasks of each queue by status, exact; statuses a queue has no task in are absent. */
export async function queueStatusCounts(db: Queryable, queueIds: readonly string[]): Promise<QueueStatusCount[]> {
  if (queueIds.length === 0) return [];
  const res = await db.query<{ queue_id: string; status: TaskStatus; tasks: string }>(
    `SELECT queue_id, status, sum(tasks)::text AS tasks FROM queue_counters
      WHERE queue_id = ANY($1::text[]) GROUP BY queue_id, status HAVING sum(tasks) <> 0`,
    [queueIds],
  );
  return res.rows.map((r) => ({ queueId: r.queue_id, status: r.status, tasks: Number(r.tasks) }));
}

/** Tasks of one queue in `status`, exact as of the caller's statement (a concurrency check's count). */
export async function queueTasksIn(db: Queryable, queueId: string, status: TaskStatus): Promise<number> {
  const res = await db.query<{ tasks: string }>(
    `SELECT coalesce(sum(tasks), 0)::text AS tasks FROM queue_counters WHERE queue_id = $1 AND status = $2::"TaskStatus"`,
    [queueId, status],
  );
  return Number(res.rows[0]?.tasks ?? 0);
}

/** Seconds the oldest due QUEUED task of each queue has waited past its runAt; queues with none are absent. */
export async function oldestQueuedAges(db: Queryable, queueIds: readonly string[]): Promise<Map<string, number>> {
  if (queueIds.length === 0) return new Map();
  const res = await db.query<{ queue_id: string; age: number }>(
    `SELECT q.id AS queue_id, extract(epoch FROM now() - min(first_due.run_at))::float8 AS age
       FROM unnest($1::text[]) AS q(id) CROSS JOIN ${firstInWaitingLanes("q.id", "t.status = 'QUEUED' AND t.run_at <= now()")}
      GROUP BY q.id`,
    [queueIds],
  );
  return new Map(res.rows.map((r) => [r.queue_id, Math.max(0, r.age)]));
}

/**
 * Folds per-session rows into each count's base row (slot 0), as
 * foldPendingCounters does for tenant_counters: rows a running transaction
 * holds are skipped, base rows are written in key order, sums are unchanged.
 */
export async function foldQueueCounters(db: Queryable, limit = 10_000): Promise<number> {
  const res = await db.query<{ n: number }>(
    `WITH picked AS (
       SELECT queue_id, status, slot FROM queue_counters WHERE slot <> 0
       ORDER BY queue_id, status, slot LIMIT $1 FOR UPDATE SKIP LOCKED
     ),
     gone AS (
       DELETE FROM queue_counters c USING picked p
       WHERE c.queue_id = p.queue_id AND c.status = p.status AND c.slot = p.slot
       RETURNING c.queue_id, c.status, c.tenant_id, c.tasks
     ),
     base AS (
       INSERT INTO queue_counters AS b (queue_id, status, slot, tenant_id, tasks)
       SELECT queue_id, status, 0, min(tenant_id), sum(tasks) FROM gone GROUP BY queue_id, status ORDER BY queue_id, status
       ON CONFLICT (queue_id, status, slot) DO UPDATE SET tasks = b.tasks + EXCLUDED.tasks
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM gone)::int AS n, (SELECT count(*) FROM base) AS _`,
    [limit],
  );
  return res.rows[0]?.n ?? 0;
}
