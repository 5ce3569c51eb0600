import type { Database } from "../database.js";

export interface HeartbeatOutcome {
  leaseExpiresAt: Date;
  cancelRequested: boolean;
}

/**
 * Extends a live lease, never past the task's timeout measured from the start
 * of this attempt. A cancelled task keeps answering (cancelRequested: true) so
 * the worker can stop cleanly. Null when the generation no longer matches.
 */
export async function extendLease(db: Database, tenantId: string, taskId: string, generation: number, extendMs: number): Promise<HeartbeatOutcome | null> {
  const res = await db.pool.query(
    `UPDATE tasks t SET lease_expires_at = CASE WHEN t.status = 'RUNNING' THEN LEAST(
        now() + $4::float8 * interval '1 millisecond',
        (SELECT a.started_at FROM task_attempts a WHERE a.task_id = t.id AND a.lease_token = t.lease_token)
          + t.timeout_seconds * interval '1 second') ELSE t.lease_expires_at END
     WHERE t.id = $1 AND t.tenant_id = $2 AND t.lease_generation = $3
       AND (t.status = 'RUNNING' OR (t.status = 'CANCELLED' AND t.cancel_requested))
     RETURNING t.lease_expires_at, t.cancel_requested`,
    [taskId, tenantId, generation, extendMs],
  );
  const row = res.rows[0];
  return row ? { leaseExpiresAt: row.lease_expires_at as Date, cancelRequested: row.cancel_requested as boolean } : null;
}
