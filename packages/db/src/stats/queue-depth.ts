import type { QueueMode, TaskStatus } from "@tasklane/core";
import type { Database } from "../database.js";

/** Statuses that count as backlog (queue depth) or as the dead-letter queue; finished work is not counted. */
export const DEPTH_STATUSES = ["SCHEDULED", "BLOCKED", "QUEUED", "RUNNING", "RETRYING", "DEAD"] as const satisfies readonly TaskStatus[];

export interface QueueDepthRow {
  status: (typeof DEPTH_STATUSES)[number];
  mode: QueueMode;
  /** Present only when asked for per-tenant rows. */
  tenantId?: string;
  queue?: string;
  tasks: number;
  /**
   * Seconds the oldest runnable task of this group has been waiting past its
   * runAt; null when none waits. Paused queues do not count: their wait is the tenant's choice.
   */
  oldestWaitSeconds: number | null;
}

/**
 * One GROUP BY over the unfinished (and dead) tasks, for the scheduler's
 * gauges. The status filter lets the (status, run_at) index skip the
 * finished rows that make up most of the table.
 */
export async function readQueueDepth(db: Database, options: { perTenant: boolean }): Promise<QueueDepthRow[]> {
  const extraColumns = options.perTenant ? ", t.tenant_id, q.name AS queue" : "";
  const extraGroups = options.perTenant ? ", t.tenant_id, q.name" : "";
  const res = await db.pool.query<{ status: QueueDepthRow["status"]; mode: QueueMode; tenant_id?: string; queue?: string; tasks: number; oldest_wait: number | null }>(
    `SELECT t.status, q.mode${extraColumns}, count(*)::int AS tasks,
       extract(epoch FROM now() - min(t.run_at) FILTER (
         WHERE t.status IN ('QUEUED', 'SCHEDULED', 'RETRYING') AND t.run_at <= now() AND NOT q.paused
       ))::float8 AS oldest_wait
     FROM tasks t JOIN queues q ON q.id = t.queue_id
     WHERE t.status = ANY($1::"TaskStatus"[])
     GROUP BY t.status, q.mode${extraGroups}`,
    [DEPTH_STATUSES],
  );
  return res.rows.map((r) => ({
    status: r.status,
    mode: r.mode,
    ...(r.tenant_id !== undefined ? { tenantId: r.tenant_id } : {}),
    ...(r.queue !== undefined ? { queue: r.queue } : {}),
    tasks: r.tasks,
    oldestWaitSeconds: r.oldest_wait,
  }));
}
