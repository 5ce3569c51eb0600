import { prepared, type Database } from "../database.js";
import { dispatchOutboxCtes, mapDispatchRow, type DispatchIntent } from "../outbox/dispatch-intent.js";
import { RETURNING_FOR_CTES, enqueuedGenerationExpr, eventInsert, lockById, sameId } from "./sql-fragments.js";

/**
 * Hands back leases that were granted but never delivered: the lease
 * statement committed while the worker that asked had gone (a Worker stopping
 * aborts its long poll, and the answer then reaches nobody). Such a task would
 * otherwise sit RUNNING until its lease ran out and then be charged an attempt
 * that never ran: with maxAttempts 1, DEAD without ever running. Each task is
 * waiting again as if never leased: its attempt count and start time as they
 * were, the attempt row gone, and an event saying why. The lease generation
 * stays where the lease took it, so that token can never match again.
 * Only a lease still exactly as granted (same generation, still RUNNING) is returned.
 */
export async function returnUndeliveredLeases(
  db: Database,
  tenantId: string,
  leases: readonly { taskId: string; leaseGeneration: number }[],
  actor: string,
): Promise<string[]> {
  if (leases.length === 0) return [];
  const res = await db.pool.query(
    `WITH cand AS (
       SELECT t.id, t.status AS from_status, t.lease_token AS old_token
       FROM unnest($1::text[], $2::int[]) AS l(id, generation)
       CROSS JOIN LATERAL ${lockById("l.id", ["id", "status", "lease_token", "lease_generation", "tenant_id"])} t
       WHERE t.tenant_id = $3 AND t.status = 'RUNNING' AND t.lease_generation = l.generation
     ),
     upd AS (
       UPDATE tasks t SET
         status = (CASE WHEN t.run_at > now() THEN 'SCHEDULED' ELSE 'QUEUED' END)::"TaskStatus",
         attempts = t.attempts - 1,
         started_at = CASE WHEN t.attempts_before_redrive + t.attempts - 1 = 0 THEN NULL ELSE t.started_at END,
         lease_token = NULL, lease_expires_at = NULL, worker_id = NULL, updated_at = now()
       FROM cand WHERE t.id = cand.id
       RETURNING ${RETURNING_FOR_CTES}, cand.from_status, cand.old_token
     ),
     att AS (DELETE FROM task_attempts a USING upd WHERE a.task_id = upd.id AND a.lease_token = upd.old_token),
     ev AS (${eventInsert("upd", "$4", "'lease granted but never delivered: the worker had gone'")})
     SELECT id FROM upd`,
    [leases.map((l) => l.taskId), leases.map((l) => l.leaseGeneration), tenantId, actor],
  );
  return res.rows.map((r) => r.id as string);
}

/** What the audit event says of a PUSH attempt handed back by a stopping worker. */
export const INTERRUPTED_ATTEMPT_REASON = "worker stopped while the request was in flight: handed back uncharged (the endpoint may have done the work)";

const RETURN_INTERRUPTED = `WITH cand AS (
     SELECT t.id, t.status AS from_status, t.lease_token AS old_token
     FROM (SELECT u.id, u.generation FROM unnest($1::text[], $2::int[]) AS u(id, generation) ORDER BY u.id) l
     CROSS JOIN LATERAL ${lockById("l.id", ["id", "status", "lease_token", "lease_generation"])} t
     WHERE t.status = 'RUNNING' AND t.lease_generation = l.generation
   ),
   upd AS (
     UPDATE tasks t SET
       status = (CASE WHEN t.run_at > now() THEN 'SCHEDULED' ELSE 'QUEUED' END)::"TaskStatus",
       attempts = t.attempts - 1,
       started_at = CASE WHEN t.attempts_before_redrive + t.attempts - 1 = 0 THEN NULL ELSE t.started_at END,
       lease_token = NULL, lease_expires_at = NULL, worker_id = NULL,
       dispatch_generation = t.dispatch_generation + 1,
       enqueued_generation = ${enqueuedGenerationExpr("t.dispatch_generation + 1", "t.run_at", "$4::float8")},
       updated_at = now()
     FROM cand WHERE ${sameId("t", "cand")}
     RETURNING ${RETURNING_FOR_CTES}, cand.from_status, cand.old_token
   ),
   att AS (DELETE FROM task_attempts a USING upd WHERE a.task_id = upd.id AND a.lease_token = upd.old_token),
   ev AS (${eventInsert("upd", "$3", `'${INTERRUPTED_ATTEMPT_REASON}'`)}),
   ${dispatchOutboxCtes("ob", "upd", "$4::float8")}
   SELECT upd.id AS task_id, upd.tenant_id, upd.queue_id, upd.priority, upd.run_at, upd.dispatch_generation, upd.trace_parent, ob.outbox_id
   FROM upd LEFT JOIN ob ON ob.task_id = upd.id`;

/**
 * Hands back PUSH attempts a stopping worker cut off mid-request: the
 * endpoint was healthy, only slower than the worker's drain, so the attempt
 * is not charged (it had counted as a network error: with maxAttempts 1, DEAD
 * on every deploy). Each task waits again as returnUndeliveredLeases leaves
 * a PULL task (attempt count and start time as they were, the attempt row
 * gone, an event saying why), and is dispatched again at once (new dispatch
 * generation, outbox row) for another worker. The request was sent, so the
 * endpoint may have done the work: it runs again, at least once as after a
 * kill. Only a lease still exactly as granted (same generation, still RUNNING) is returned.
 */
export async function returnInterruptedAttempts(
  db: Database,
  leases: readonly { taskId: string; leaseGeneration: number }[],
  actor: string,
  horizonMs: number,
): Promise<{ returned: string[]; dispatch: DispatchIntent[] }> {
  if (leases.length === 0) return { returned: [], dispatch: [] };
  const res = await db.pool.query(
    prepared(RETURN_INTERRUPTED, [leases.map((l) => l.taskId), leases.map((l) => l.leaseGeneration), actor, horizonMs]),
  );
  return {
    returned: res.rows.map((r) => r.task_id as string),
    dispatch: res.rows.filter((r) => r.outbox_id != null).map(mapDispatchRow),
  };
}
