import type pg from "pg";
import { mapReleased, type DispatchIntent } from "../outbox/dispatch-intent.js";
import { RELEASED_JOIN, RETURNING_FOR_CTES, eventInsert, notifyOutboxInsert, releaseNextInOrder } from "../transitions/sql-fragments.js";

/**
 * CANCEL_RUNNING: cancels every unfinished run of a schedule inside the
 * firing transaction (same rules as cancelTask: a RUNNING run becomes
 * CANCELLED with cancelRequested, and its late outcome is refused).
 */
export async function cancelUnfinishedRuns(
  client: pg.PoolClient,
  scheduleId: string,
  actor: string,
  horizonMs: number,
): Promise<{ wasRunning: string[]; dispatch: DispatchIntent[] }> {
  const res = await client.query(
    `WITH cand AS (
       SELECT t.id, t.status AS from_status, t.lease_token AS old_token FROM tasks t
       WHERE t.schedule_id = $1 AND t.status IN ('SCHEDULED', 'QUEUED', 'RETRYING', 'BLOCKED', 'RUNNING') FOR UPDATE OF t
     ),
     upd AS (
       UPDATE tasks t SET status = 'CANCELLED', completed_at = now(), updated_at = now(),
         cancel_requested = (cand.from_status = 'RUNNING')
       FROM cand WHERE t.id = cand.id
       RETURNING ${RETURNING_FOR_CTES}, cand.from_status, cand.old_token
     ),
     att AS (
       UPDATE task_attempts a SET finished_at = now(), outcome = 'CANCELLED'
       FROM upd WHERE upd.from_status = 'RUNNING' AND a.task_id = upd.id AND a.lease_token = upd.old_token
     ),
     ev AS (${eventInsert("upd", "$2", "'overlap policy CANCEL_RUNNING'")}),
     nt AS (${notifyOutboxInsert("upd")}),
     ${releaseNextInOrder("upd", "$3::float8")}
     SELECT upd.id, upd.from_status, released_rows.released FROM upd ${RELEASED_JOIN}`,
    [scheduleId, actor, horizonMs],
  );
  return {
    wasRunning: res.rows.filter((r) => r.from_status === "RUNNING").map((r) => r.id as string),
    dispatch: mapReleased(res.rows),
  };
}
