import { MAX_ERROR_LENGTH, type FailureDecision } from "@tasklane/core";
import type { Database } from "../database.js";
import { dispatchOutboxCte, mapDispatchRow, mapReleased, type DispatchIntent } from "../outbox/dispatch-intent.js";
import { mapTaskRow, taskColumnsOf, type TaskRecord } from "../tasks/task-record.js";
import { RELEASED_JOIN, RETURNING_FOR_CTES, enqueuedGenerationExpr, eventInsert, notifyOutboxInsert, releaseNextInOrder } from "./sql-fragments.js";

/** Five minutes: matches the scheduler's default DISPATCH_HORIZON_SECONDS. */
const DEFAULT_HORIZON_MS = 300_000;

export interface Completion {
  taskId: string;
  leaseGeneration: number;
  result: unknown;
}

export interface FinishResult {
  /** Tasks whose outcome was recorded, with their new state. */
  accepted: TaskRecord[];
  /** Task ids whose lease had moved on (expired, re-leased, cancelled): nothing was changed. */
  refused: string[];
  dispatch: DispatchIntent[];
}

function finishSql(cand: string, set: string, outcome: string, errorExpr: string, horizonParam: string, actorParam: string, dispatchRetry: boolean): string {
  return `WITH cand AS (${cand}),
    upd AS (
      UPDATE tasks t SET ${set}, lease_token = NULL, lease_expires_at = NULL, updated_at = now()
      FROM cand WHERE t.id = cand.id
      RETURNING ${RETURNING_FOR_CTES}, cand.from_status, cand.old_token
    ),
    att AS (
      UPDATE task_attempts a SET finished_at = now(), outcome = ${outcome}, error = ${errorExpr}
      FROM upd WHERE a.task_id = upd.id AND a.lease_token = upd.old_token
    ),
    ev AS (${eventInsert("upd", actorParam)}),
    nt AS (${notifyOutboxInsert("upd")}),
    ${releaseNextInOrder("upd", horizonParam)}
    ${dispatchRetry ? `, ob AS (${dispatchOutboxCte("upd", horizonParam)})` : ""}
    SELECT ${taskColumnsOf("upd")}${dispatchRetry ? ", ob.outbox_id" : ""}, released_rows.released FROM upd
    JOIN queues q ON q.id = upd.queue_id ${dispatchRetry ? "LEFT JOIN ob ON ob.task_id = upd.id" : ""}
    ${RELEASED_JOIN}`;
}

/**
 * Records successful attempts, many in one statement (the worker groups its
 * completions). Each is accepted only if the task is still RUNNING under the
 * same lease generation.
 */
export async function completeAttempts(db: Database, items: Completion[], actor: string, horizonMs = DEFAULT_HORIZON_MS): Promise<FinishResult> {
  if (items.length === 0) return { accepted: [], refused: [], dispatch: [] };
  const sql = finishSql(
    `SELECT t.id, t.status AS from_status, t.lease_token AS old_token, i.result FROM tasks t
     JOIN unnest($1::text[], $2::int[], $3::text[]) AS i(id, gen, result) ON i.id = t.id
     WHERE t.status = 'RUNNING' AND t.lease_generation = i.gen FOR UPDATE OF t`,
    `status = 'SUCCEEDED', result = cand.result::jsonb, completed_at = now()`,
    `'SUCCEEDED'`,
    "NULL",
    "$5::float8",
    "$4",
    false,
  );
  const res = await db.pool.query(sql, [
    items.map((i) => i.taskId),
    items.map((i) => i.leaseGeneration),
    items.map((i) => (i.result === undefined ? null : JSON.stringify(i.result))),
    actor,
    horizonMs,
  ]);
  const accepted = res.rows.map(mapTaskRow);
  const ok = new Set(accepted.map((t) => t.id));
  return { accepted, refused: items.filter((i) => !ok.has(i.taskId)).map((i) => i.taskId), dispatch: mapReleased(res.rows) };
}

export interface Failure {
  taskId: string;
  leaseGeneration: number;
  error: string;
  outcome: "FAILED" | "TIMED_OUT";
  /** Computed by the caller with core's decideAfterFailure from the task it leased. */
  decision: FailureDecision;
}

/** Records a failed attempt: RETRYING after the backoff, or DEAD. */
export async function failAttempt(db: Database, failure: Failure, actor: string, horizonMs: number): Promise<FinishResult> {
  const retry = failure.decision.kind === "retry";
  const delayMs = failure.decision.kind === "retry" ? failure.decision.delayMs : 0;
  const sql = finishSql(
    `SELECT t.id, t.status AS from_status, t.lease_token AS old_token, $4::float8 AS delay_ms FROM tasks t
     WHERE t.id = $1 AND t.status = 'RUNNING' AND t.lease_generation = $2 FOR UPDATE OF t`,
    retry
      ? `status = 'RETRYING', run_at = now() + cand.delay_ms * interval '1 millisecond', last_error = $3,
         dispatch_generation = t.dispatch_generation + 1,
         enqueued_generation = ${enqueuedGenerationExpr("t.dispatch_generation + 1", "now() + cand.delay_ms * interval '1 millisecond'", "$7::float8")}`
      : `status = 'DEAD', last_error = $3, completed_at = now()`,
    `$6::"AttemptOutcome"`,
    "$3",
    "$7::float8",
    "$5",
    retry,
  );
  const res = await db.pool.query(sql, [
    failure.taskId,
    failure.leaseGeneration,
    failure.error.slice(0, MAX_ERROR_LENGTH),
    delayMs,
    actor,
    failure.outcome,
    horizonMs,
  ]);
  const accepted = res.rows.map(mapTaskRow);
  return {
    accepted,
    refused: accepted.length ? [] : [failure.taskId],
    dispatch: [
      ...res.rows.filter((r) => r.outbox_id != null).map((r) => mapDispatchRow({ ...r, task_id: r.id })),
      ...mapReleased(res.rows),
    ],
  };
}
