import type { Priority } from "@tasklane/core";

/**
 * "Place this task's current dispatch generation in Redis." Produced by every
 * transition that makes a PUSH task runnable, together with an outbox row in
 * the same transaction; consumed by the fast path right after commit and, if
 * that never happens (crash), by the scheduler's outbox dispatcher.
 */
export interface DispatchIntent {
  taskId: string;
  tenantId: string;
  queueId: string;
  priority: Priority;
  runAt: Date;
  dispatchGeneration: number;
  /** The outbox row to delete once the job is in Redis (shared by the tasks one statement wrote); absent for reconciler re-adds. */
  outboxId?: string;
  /** The task's W3C traceparent, where the producing SQL returned it: the dispatch span's parent. */
  traceParent?: string;
}

export function mapDispatchRow(r: Record<string, unknown>): DispatchIntent {
  return {
    taskId: r.task_id as string,
    tenantId: r.tenant_id as string,
    queueId: r.queue_id as string,
    priority: r.priority as Priority,
    // Rows built with json_build_object carry the time as a string.
    runAt: r.run_at instanceof Date ? r.run_at : new Date(r.run_at as string),
    dispatchGeneration: r.dispatch_generation as number,
    ...(r.outbox_id != null ? { outboxId: String(r.outbox_id) } : {}),
    ...(typeof r.trace_parent === "string" ? { traceParent: r.trace_parent } : {}),
  };
}

/**
 * SQL fragment: CTEs `<name>_rows`, the outbox rows for the PUSH tasks of
 * `source` that are due within the horizon (one row per tenant, listing its
 * tasks), and `<name>`, those rows as (outbox_id, task_id) pairs. One row per
 * statement rather than per task: the fast path deletes it right after the
 * commit, so a row per task cost two writes per task.
 */
export function dispatchOutboxCtes(name: string, source: string, horizonParam: string): string {
  return `${name}_rows AS (
      INSERT INTO outbox (kind, tenant_id, task_ids)
      SELECT 'DISPATCH_TASK', s.tenant_id, array_agg(s.id) FROM ${source} s
      JOIN queues dq ON dq.id = s.queue_id
      WHERE dq.mode = 'PUSH' AND s.status IN ('QUEUED', 'SCHEDULED', 'RETRYING')
        AND s.run_at <= now() + ${horizonParam} * interval '1 millisecond'
      GROUP BY s.tenant_id
      RETURNING id, task_ids
    ),
    ${name} AS (SELECT r.id AS outbox_id, x.task_id FROM ${name}_rows r CROSS JOIN LATERAL unnest(r.task_ids) AS x(task_id))`;
}

/** The `released` column of RELEASED_JOIN as dispatch intents. */
export function mapReleased(rows: Record<string, unknown>[]): DispatchIntent[] {
  const first = rows[0];
  const released = (first?.released ?? []) as Record<string, unknown>[];
  return released.map(mapDispatchRow);
}
