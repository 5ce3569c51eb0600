import type { Database } from "../database.js";

export interface HeartbeatOutcome {
  leaseExpiresAt: Date;
  cancelRequested: boolean;
}

/**
 * Extends a live lease up to `extendMs` from now, never past the task's
 * timeout measured from the start of this attempt, and never shortens it (a
 * heartbeat asking for less than the lease has left leaves it as it is). Once
 * the attempt's time budget is spent the lease cannot be held any longer: null,
 * as for a generation that no longer matches. A cancelled task keeps answering
 * (cancelRequested: true) so the worker can stop cleanly.
 */
export async function extendLease(db: Database, tenantId: string, taskId: string, generation: number, extendMs: number): Promise<HeartbeatOutcome | null> {
  const res = await db.pool.query(
    `UPDATE tasks t SET lease_expires_at = CASE WHEN t.status = 'RUNNING'
        THEN GREATEST(t.lease_expires_at, LEAST(now() + $4::float8 * interval '1 millisecond', budget.ends_at))
        ELSE t.lease_expires_at END
     FROM (SELECT (SELECT a.started_at FROM task_attempts a WHERE a.task_id = t2.id AND a.lease_token = t2.lease_token)
                  + t2.timeout_seconds * interval '1 second' AS ends_at
             FROM tasks t2 WHERE t2.id = $1) budget
     WHERE t.id = $1 AND t.tenant_id = $2 AND t.lease_generation = $3
       AND ((t.status = 'RUNNING' AND budget.ends_at > now()) OR (t.status = 'CANCELLED' AND t.cancel_requested))
     RETURNING t.lease_expires_at, t.cancel_requested`,
    [taskId, tenantId, generation, extendMs],
  );
  const row = res.rows[0];
  return row ? { leaseExpiresAt: row.lease_expires_at as Date, cancelRequested: row.cancel_requested as boolean } : null;
}
