import { prepared, withTransaction, withTransactionIfAny, type Database } from "../database.js";
import { dispatchOutboxCtes, mapDispatchRow, mapReleased, type DispatchIntent } from "../outbox/dispatch-intent.js";
import { RELEASED_JOIN, RETURNING_FOR_CTES, endAttempts, enqueuedGenerationExpr, eventInsert, notifyOutboxInsert, releaseNextInOrder, sameId } from "./sql-fragments.js";
import { advanceWorkflows } from "./workflow-progress.js";

/** Leases that ran out: the probe and the claim below test the same thing. */
const LEASE_EXPIRED = "t.status = 'RUNNING' AND t.lease_expires_at < now()";
const ANY_LEASE_EXPIRED = `SELECT 1 FROM tasks t WHERE ${LEASE_EXPIRED} LIMIT 1`;

/**
 * A PULL lease is granted, and extended by heartbeats, never past the
 * attempt's time budget (its start plus the task's timeoutSeconds), so one
 * that ran out at that end was held to the last: the task's timeout elapsed
 * (TIMED_OUT). One that ran out sooner was not renewed: the worker stopped
 * heartbeating (LEASE_EXPIRED). The SDK Worker tells its handler the same
 * two apart. A PUSH lease is the timeout plus a grace and the PUSH worker
 * records its own timeouts, so a PUSH lease running out means the worker
 * stopped (LEASE_EXPIRED).
 *
 * Neither the task nor the attempt records which kind of executor held the
 * lease (worker_id and the event's actor look alike for both), so the
 * queue's mode now stands in for the mode the lease was granted under. The
 * lease's end narrows the gap: a PULL lease ends at the budget at the
 * latest, so one that ran out exactly there qualifies, and a PUSH lease with
 * its grace (past the budget) never does, even on a queue switched from PUSH
 * to PULL while it ran. Left: a queue switched from PULL to PUSH while a PULL
 * attempt ran to its timeout reads LEASE_EXPIRED, and a PUSH lease granted
 * without grace on a queue since switched to PULL reads TIMED_OUT. Either
 * way the task runs again at once; only the attempt's outcome is misnamed.
 */
const TIMED_OUT = `(SELECT q.mode FROM queues q WHERE q.id = t.queue_id) = 'PULL'
     AND t.lease_expires_at = (SELECT a.started_at FROM task_attempts a WHERE a.task_id = t.id ORDER BY a.id DESC LIMIT 1)
       + t.timeout_seconds * interval '1 second'`;

/** The error a timed-out attempt records, as the PUSH worker words it (the task's last_error and the event's reason too). */
const timedOutError = (task: string) => `'Timed out after ' || ${task}.timeout_seconds || ' s'`;

const EXPIRE_LEASES = `WITH cand AS (
     SELECT t.id, t.status AS from_status, t.lease_token AS old_token, COALESCE(${TIMED_OUT}, FALSE) AS timed_out FROM tasks t
     WHERE ${LEASE_EXPIRED}
     ORDER BY t.lease_expires_at LIMIT $1 FOR UPDATE OF t SKIP LOCKED
   ),
   upd AS (
     UPDATE tasks t SET
       status = (CASE WHEN t.attempts < t.max_attempts THEN 'QUEUED' ELSE 'DEAD' END)::"TaskStatus",
       run_at = CASE WHEN t.attempts < t.max_attempts THEN now() ELSE t.run_at END,
       completed_at = CASE WHEN t.attempts < t.max_attempts THEN NULL ELSE now() END,
       last_error = CASE WHEN cand.timed_out THEN ${timedOutError("t")} ELSE 'lease expired' END,
       lease_token = NULL, lease_expires_at = NULL,
       dispatch_generation = t.dispatch_generation + 1, updated_at = now(),
       enqueued_generation = ${enqueuedGenerationExpr("t.dispatch_generation + 1", "now()", "$2::float8")}
     FROM cand WHERE ${sameId("t", "cand")}
     RETURNING ${RETURNING_FOR_CTES}, cand.from_status, cand.old_token, cand.timed_out
   ),
   att AS (${endAttempts("upd", "finished_at = now(), outcome = 'LEASE_EXPIRED', error = 'lease expired'", "NOT s.timed_out")}),
   att_timed_out AS (${endAttempts(
     "upd",
     `finished_at = now(), outcome = 'TIMED_OUT', error = (SELECT ${timedOutError("x")} FROM tasks x WHERE x.id = a.task_id)`,
     "s.timed_out",
   )}),
   ev AS (${eventInsert("upd", "'scheduler:lease-expiry'", "last_error")}),
   nt AS (${notifyOutboxInsert("upd")}),
   ${dispatchOutboxCtes("ob", "upd", "$2::float8")},
   ${releaseNextInOrder("upd", "$2::float8")}
   SELECT upd.id AS task_id, upd.tenant_id, upd.queue_id, upd.priority, upd.run_at, upd.dispatch_generation, ob.outbox_id,
     upd.status, upd.workflow_id, upd.trace_parent, upd.timed_out, released_rows.released
   FROM upd LEFT JOIN ob ON ob.task_id = upd.id ${RELEASED_JOIN}`;

export interface ExpiredLeases {
  /** Attempts ended LEASE_EXPIRED: the executor died, stalled or stopped heartbeating. */
  expired: number;
  /**
   * PULL attempts ended TIMED_OUT (their lease ran to the task's timeout):
   * `retried` where the task runs again, `dead` where that was its last
   * attempt. The handler was slow, not the worker gone.
   */
  timedOut: { retried: number; dead: number };
  dispatch: DispatchIntent[];
}

/**
 * Leases that ran out: the executor died or stalled, or a PULL attempt used up
 * its timeout. The attempt counts (outcome LEASE_EXPIRED, or TIMED_OUT: see
 * TIMED_OUT above); the task runs again at once while budget remains,
 * otherwise it is DEAD. The old token can never match again because the next
 * lease bumps the generation. A workflow task that ends DEAD here skips its
 * dependants in the same transaction. At most `limit` leases, of both kinds.
 */
export async function expireLeases(db: Database, limit: number, horizonMs: number): Promise<ExpiredLeases> {
  const none: ExpiredLeases = { expired: 0, timedOut: { retried: 0, dead: 0 }, dispatch: [] };
  return withTransactionIfAny(db.pool, prepared(ANY_LEASE_EXPIRED, []), none, async (client) => {
    const res = await client.query(prepared(EXPIRE_LEASES, [limit, horizonMs]));
    const dead = res.rows
      .filter((r) => r.status === "DEAD")
      .map((r) => ({ id: r.task_id as string, workflowId: (r.workflow_id as string | null) ?? null }));
    const workflows = await advanceWorkflows(client, dead, "scheduler", horizonMs);
    const timedOut = res.rows.filter((r) => r.timed_out === true);
    const timedOutDead = timedOut.filter((r) => r.status === "DEAD").length;
    return {
      expired: res.rows.length - timedOut.length,
      timedOut: { retried: timedOut.length - timedOutDead, dead: timedOutDead },
      dispatch: [...res.rows.filter((r) => r.outbox_id != null).map(mapDispatchRow), ...mapReleased(res.rows), ...workflows.dispatch],
    };
  });
}

const PROMOTE_DUE = `WITH cand AS (
     SELECT t.id, t.status AS from_status FROM tasks t
     WHERE t.status IN ('SCHEDULED', 'RETRYING') AND t.run_at <= now() - $2 * interval '1 millisecond'
     ORDER BY t.run_at LIMIT $1 FOR UPDATE OF t SKIP LOCKED
   ),
   upd AS (
     UPDATE tasks t SET status = 'QUEUED', updated_at = now() FROM cand WHERE ${sameId("t", "cand")}
     RETURNING ${RETURNING_FOR_CTES}, cand.from_status
   ),
   ev AS (${eventInsert("upd", "'scheduler'")})
   SELECT count(*)::int AS n FROM upd`;

/**
 * SCHEDULED and RETRYING tasks whose time has come read as QUEUED from here
 * on. Execution does not wait for this (a worker may start a due task in any
 * of the three states); it keeps the reported status honest.
 */
export async function promoteDueTasks(db: Database, limit: number, graceMs = 0): Promise<number> {
  const res = await db.pool.query(prepared(PROMOTE_DUE, [limit, graceMs]));
  return (res.rows[0]?.n as number | undefined) ?? 0;
}
