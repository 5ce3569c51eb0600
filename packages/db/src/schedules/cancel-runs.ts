import type pg from "pg";
import { mapReleased, type DispatchIntent } from "../outbox/dispatch-intent.js";
import { RELEASED_JOIN, RETURNING_FOR_CTES, cancelCtes, eventInsert, notifyOutboxInsert, releaseNextInOrder, sameId } from "../transitions/sql-fragments.js";

/**
 * CANCEL_RUNNING: cancels every unfinished run of a schedule but `keepId`
 * (the run that replaces them) inside the firing transaction (same rules as
 * cancelTask: a RUNNING run becomes CANCELLED with cancelRequested, and its
 * late outcome is refused).
 */
export async function cancelUnfinishedRuns(
  client: pg.PoolClient,
  scheduleId: string,
  keepId: string,
  actor: string,
  horizonMs: number,
): Promise<{ wasRunning: string[]; dispatch: DispatchIntent[] }> {
  const res = await client.query(
    `${cancelCtes("t.schedule_id = $1 AND t.status IN ('SCHEDULED', 'QUEUED', 'RETRYING', 'BLOCKED', 'RUNNING') AND t.id <> $4", "$2", "'overlap policy CANCEL_RUNNING'")},
     ${releaseNextInOrder("upd", "$3::float8")}
     SELECT upd.id, upd.from_status, released_rows.released FROM upd ${RELEASED_JOIN}`,
    [scheduleId, actor, horizonMs, keepId],
  );
  return {
    wasRunning: res.rows.filter((r) => r.from_status === "RUNNING").map((r) => r.id as string),
    dispatch: mapReleased(res.rows),
  };
}

/**
 * A schedule that is changed, disabled or deleted has its future runs
 * (materialised ahead of their occurrence, SCHEDULED) SKIPPED in the same
 * transaction, with `reason` on their event and as their lastError (as every
 * SKIPPED run says why): they would otherwise run as the
 * schedule no longer says. Their occurrence keys are released (set to null;
 * run_at still tells the instant), so the scheduler can materialise the changed
 * schedule's runs for the same instants from its new next_run_at. Runs already
 * due, and runs a worker has already started ahead of their instant, are left
 * to run.
 */
export async function skipPendingRuns(
  client: pg.PoolClient,
  scheduleId: string,
  actor: string,
  reason: string,
  horizonMs: number,
): Promise<{ skipped: string[]; dispatch: DispatchIntent[] }> {
  const res = await client.query(
    `WITH cand AS (
       SELECT t.id, t.status AS from_status FROM tasks t
       WHERE t.schedule_id = $1 AND t.status = 'SCHEDULED' AND t.run_at > now()
       ORDER BY t.id FOR UPDATE OF t
     ),
     upd AS (
       UPDATE tasks t SET status = 'SKIPPED', completed_at = now(), updated_at = now(), occurrence_key = NULL, last_error = $3
       FROM cand WHERE ${sameId("t", "cand")}
       RETURNING ${RETURNING_FOR_CTES}, cand.from_status
     ),
     ev AS (${eventInsert("upd", "$2", "$3")}),
     nt AS (${notifyOutboxInsert("upd")}),
     ${releaseNextInOrder("upd", "$4::float8")}
     SELECT upd.id, released_rows.released FROM upd ${RELEASED_JOIN}`,
    [scheduleId, actor, reason, horizonMs],
  );
  return { skipped: res.rows.map((r) => r.id as string), dispatch: mapReleased(res.rows) };
}
