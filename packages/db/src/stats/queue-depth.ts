import type { QueueMode, TaskStatus } from "@tasklane/core";
import type { Database } from "../database.js";
import { firstInWaitingLanes } from "../tasks/waiting-lanes.js";

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
   * For the waiting statuses: seconds the oldest due task (QUEUED, SCHEDULED or
   * RETRYING) of this group's queues has been waiting past its runAt; null when
   * none waits. Paused queues do not count: their wait is the tenant's choice.
   */
  oldestWaitSeconds: number | null;
}

/**
 * The scheduler's gauges, from queue_counters: no task row is counted. A
 * paused queue's waiting tasks are left out, as from the oldest wait: they
 * cannot start, and the depth drives worker autoscaling (its RUNNING tasks
 * still hold worker slots, and its DEAD ones are still dead letters). The
 * oldest wait takes the first due task of each waiting lane of the queues
 * with waiting tasks, however long their backlogs.
 */
export async function readQueueDepth(db: Database, options: { perTenant: boolean }): Promise<QueueDepthRow[]> {
  const extraColumns = options.perTenant ? ", q.tenant_id, q.name AS queue" : "";
  const extraGroups = options.perTenant ? ", q.tenant_id, q.name" : "";
  const res = await db.pool.query<{ status: QueueDepthRow["status"]; mode: QueueMode; tenant_id?: string; queue?: string; tasks: number; oldest_wait: number | null }>(
    `WITH counts AS (
       SELECT c.queue_id, c.status, sum(c.tasks) AS tasks FROM queue_counters c JOIN queues pq ON pq.id = c.queue_id
        WHERE c.status = ANY($1::"TaskStatus"[]) AND (NOT pq.paused OR c.status IN ('RUNNING', 'DEAD'))
        GROUP BY c.queue_id, c.status HAVING sum(c.tasks) <> 0
     ),
     oldest AS (
       SELECT q.id AS queue_id, min(first_due.run_at) AS run_at
         FROM queues q CROSS JOIN ${firstInWaitingLanes("q.id", "t.run_at <= now()")}
        WHERE NOT q.paused AND q.id IN (SELECT queue_id FROM counts WHERE status IN ('QUEUED', 'SCHEDULED', 'RETRYING'))
        GROUP BY q.id
     )
     SELECT c.status, q.mode${extraColumns}, sum(c.tasks)::int AS tasks,
       extract(epoch FROM now() - min(o.run_at) FILTER (WHERE c.status IN ('QUEUED', 'SCHEDULED', 'RETRYING')))::float8 AS oldest_wait
       FROM counts c JOIN queues q ON q.id = c.queue_id LEFT JOIN oldest o ON o.queue_id = c.queue_id
      GROUP BY c.status, q.mode${extraGroups}`,
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
