/**
 * Reads and upkeep of queue_counters (tasks per queue and status, kept by the
 * triggers of migration queue_counters). A count is the sum of its rows: one
 * per database session that changed it, plus the folded base row (slot 0).
 */
import type { TaskStatus } from "@tasklane/core";
import { foldSessionRows, foldSessionRowsSql } from "../counters/session-counter-rows.js";
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

/**
 * A tenant's tasks, exact, summed over its queues (or the one named) and the
 * given statuses (all when null): what the task list's total reads when only
 * statuses and a queue filter it, instead of counting the tenant's task rows.
 */
export async function tenantTaskCount(db: Queryable, tenantId: string, queueName: string | null, statuses: readonly TaskStatus[] | null): Promise<number> {
  const res = await db.query<{ tasks: string }>(
    `SELECT coalesce(sum(c.tasks), 0)::text AS tasks FROM queues q JOIN queue_counters c ON c.queue_id = q.id
      WHERE q.tenant_id = $1 AND ($2::text IS NULL OR q.name = $2) AND ($3::"TaskStatus"[] IS NULL OR c.status = ANY($3))`,
    [tenantId, queueName, statuses],
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

const FOLD_QUEUE_COUNTERS = foldSessionRowsSql({ table: "queue_counters", key: ["queue_id", "status"], value: "tasks", carried: ["tenant_id"] });

/** Folds per-session rows into each count's base row (see foldSessionRowsSql). */
export function foldQueueCounters(db: Queryable, limit = 10_000): Promise<number> {
  return foldSessionRows(db, FOLD_QUEUE_COUNTERS, limit);
}
