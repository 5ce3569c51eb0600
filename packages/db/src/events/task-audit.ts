import { isEventId, type TaskStatus } from "@tasklane/core";
import type { Queryable } from "../database.js";

/** One row of a task's audit trail (task_events): who moved it from where to where, under which attempt and lease. */
export interface TaskAuditEventRecord {
  /** task_events id, ascending in commit-independent insert order; also the `after` cursor. */
  id: string;
  taskId: string;
  fromStatus: TaskStatus | null;
  toStatus: TaskStatus;
  at: Date;
  /** Attempts started when the change was made (0 before the first start). */
  attempt: number;
  /** Fencing generation the change was made under. */
  leaseGeneration: number;
  /** Who or what: `api-key:<id>`, `worker:<id>`, `scheduler`, `scheduler:lease-expiry`, … */
  actor: string;
  reason: string | null;
}

export interface AuditPage {
  first: number;
  /** An event id: only later events are returned. */
  after?: string | null;
}

/**
 * The audit trails of many tasks of one tenant, oldest first, at most
 * `page.first` per task: one query for a whole list of tasks (the gateway
 * batches Task.events through a DataLoader). The tenant filter holds even
 * where row-level security does not apply.
 */
export async function listTaskAuditEvents(
  db: { pool: Queryable },
  tenantId: string,
  taskIds: string[],
  page: AuditPage,
): Promise<Map<string, TaskAuditEventRecord[]>> {
  const out = new Map<string, TaskAuditEventRecord[]>(taskIds.map((id) => [id, []]));
  if (taskIds.length === 0) return out;
  const after = page.after != null && isEventId(page.after) ? page.after : "0";
  const res = await db.pool.query(
    `SELECT e.id::text AS id, e.task_id, e.from_status, e.to_status, e.at, e.attempt, e.lease_generation, e.actor, e.reason
     FROM unnest($2::text[]) AS k(task_id)
     CROSS JOIN LATERAL (
       SELECT * FROM task_events e WHERE e.task_id = k.task_id AND e.tenant_id = $1 AND e.id > $3::bigint
       ORDER BY e.id LIMIT $4
     ) e
     ORDER BY e.task_id, e.id`,
    [tenantId, taskIds, after, page.first],
  );
  for (const r of res.rows) {
    out.get(r.task_id as string)?.push({
      id: r.id as string,
      taskId: r.task_id as string,
      fromStatus: (r.from_status as TaskStatus | null) ?? null,
      toStatus: r.to_status as TaskStatus,
      at: r.at as Date,
      attempt: r.attempt as number,
      leaseGeneration: r.lease_generation as number,
      actor: r.actor as string,
      reason: (r.reason as string | null) ?? null,
    });
  }
  return out;
}
