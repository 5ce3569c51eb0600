import { ConflictError, NotFoundError, RESCHEDULABLE_STATUSES, isReschedulable, isWellFormedId, rescheduleOutcome, type TaskStatus } from "@tasklane/core";
import type pg from "pg";
import { withTransaction, type Database } from "../database.js";
import { dispatchOutboxCtes, mapDispatchRow, type DispatchIntent } from "../outbox/dispatch-intent.js";
import { mapTaskRow, taskColumnsOf, type TaskRecord } from "../tasks/task-record.js";
import { RETURNING_FOR_CTES, enqueuedGenerationExpr, eventInsert, sameId } from "./sql-fragments.js";

export interface RescheduleResult {
  task: TaskRecord;
  /** The PUSH task's new job, where its new runAt is within the dispatch horizon: add it to Redis after the commit. */
  dispatch: DispatchIntent[];
}

/** A time as the audit trail spells it (ISO 8601, UTC, milliseconds). */
const iso = (expr: string) => `to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The new status, by core's rescheduleOutcome for each status a task may be rescheduled from. */
const STATUS_AFTER = `(CASE cand.from_status ${RESCHEDULABLE_STATUSES.map(
  (from) => `WHEN '${from}' THEN CASE WHEN cand.new_run_at <= now() THEN '${rescheduleOutcome(from, true).status}' ELSE '${rescheduleOutcome(from, false).status}' END`,
).join(" ")} END)::"TaskStatus"`;

/**
 * $1 task, $2 tenant, $3 the new runAt (NULL: now), $4 actor, $5 horizon (ms),
 * $6 the statuses it may be moved from. The new runAt is never before the
 * database's now, the clock that decides whether it is due, except that a
 * task already due keeps its runAt when asked to run now (or at a past time):
 * leases take due tasks in runAt order and age them from it (GREATEST(run_at,
 * created_at)), so "now" would send it behind every task that fell due since
 * and restart its aging.
 *
 * The dispatch generation grows, so a PUSH task due within the horizon gets a
 * new job (jobId task.generation) at its new time through the outbox row;
 * one moved past the horizon is left for the horizon promoter (its enqueued
 * generation stays behind). A job still in Redis for the old time is harmless:
 * the start statement starts only a task due by then (run_at <= now() in
 * start-attempts.ts), and a PULL lease reads runAt from the same row. No lease
 * generation to test: a waiting task holds no lease, and a start that takes
 * the row first makes it RUNNING, which the status test refuses under the lock.
 */
const RESCHEDULE_SQL = `WITH cand AS (
    SELECT t.id, t.status AS from_status, t.run_at AS old_run_at,
      CASE WHEN COALESCE($3::timestamptz, now()) <= now() THEN LEAST(t.run_at, now()) ELSE $3::timestamptz END AS new_run_at
    FROM tasks t WHERE t.id = $1 AND t.tenant_id = $2 AND t.status = ANY($6::"TaskStatus"[]) FOR UPDATE OF t
  ),
  upd AS (
    UPDATE tasks t SET status = ${STATUS_AFTER}, run_at = cand.new_run_at,
      dispatch_generation = t.dispatch_generation + 1, updated_at = now(),
      enqueued_generation = ${enqueuedGenerationExpr("t.dispatch_generation + 1", "cand.new_run_at", "$5::float8")}
    FROM cand WHERE ${sameId("t", "cand")}
    RETURNING ${RETURNING_FOR_CTES}, cand.from_status, cand.old_run_at
  ),
  ev AS (${eventInsert("upd", "$4", `'rescheduled: runAt ' || ${iso("old_run_at")} || ' -> ' || ${iso("run_at")}`)}),
  ${dispatchOutboxCtes("ob", "upd", "$5::float8")}
  SELECT ob.outbox_id, ${taskColumnsOf("upd")} FROM upd JOIN queues q ON q.id = upd.queue_id
  LEFT JOIN ob ON ob.task_id = upd.id`;

/**
 * Moves the runAt of a task waiting for its next attempt (core's
 * RESCHEDULABLE_STATUSES) to `runAt`, or to now when null; its status becomes
 * what core's rescheduleOutcome says for a task due at that time. Everything
 * else stays: attempts, maxAttempts, keys, workflow membership, and its place
 * in its ordering key's order (by id, not by runAt). One statement writes the
 * task, its audit event (from and to runAt in the reason) and, for a PUSH
 * task due within the horizon, its outbox row. Not the tenant's: NOT_FOUND;
 * not waiting (BLOCKED, RUNNING, terminal): CONFLICT.
 */
export async function rescheduleTask(
  db: Database,
  tenantId: string,
  id: string,
  runAt: Date | null,
  actor: string,
  horizonMs: number,
): Promise<RescheduleResult> {
  if (!isWellFormedId("task", id)) throw new NotFoundError("Task", id);
  // A task that failed its attempt as we read it (RUNNING -> RETRYING) is waiting again:
  // the next round takes it from its new status.
  for (let round = 0; round < 3; round++) {
    const result = await withTransaction(db.pool, (client) => rescheduleOnce(client, tenantId, id, runAt, actor, horizonMs));
    if (result !== null) return result;
  }
  throw new ConflictError("The task kept changing status while being rescheduled; try again");
}

async function rescheduleOnce(
  client: pg.PoolClient,
  tenantId: string,
  id: string,
  runAt: Date | null,
  actor: string,
  horizonMs: number,
): Promise<RescheduleResult | null> {
  const res = await client.query(RESCHEDULE_SQL, [id, tenantId, runAt, actor, horizonMs, RESCHEDULABLE_STATUSES]);
  const row = res.rows[0];
  if (row) {
    const dispatch = row.outbox_id != null ? [mapDispatchRow({ ...row, task_id: row.id })] : [];
    return { task: mapTaskRow(row), dispatch };
  }
  const now = await client.query<{ status: TaskStatus }>("SELECT status FROM tasks WHERE id = $1 AND tenant_id = $2", [id, tenantId]);
  const status = now.rows[0]?.status;
  if (status === undefined) throw new NotFoundError("Task", id);
  if (isReschedulable(status)) return null;
  throw new ConflictError(`Only a SCHEDULED, QUEUED or RETRYING task can be rescheduled; this one is ${status}${status === "BLOCKED" ? " (it waits for its workflow's parents)" : ""}`);
}
