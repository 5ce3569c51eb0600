import type pg from "pg";
import { mapReleased, type DispatchIntent } from "../outbox/dispatch-intent.js";
import { RELEASED_JOIN, cancelCtes, releaseNextInOrder } from "../transitions/sql-fragments.js";

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
    `${cancelCtes("t.schedule_id = $1 AND t.status IN ('SCHEDULED', 'QUEUED', 'RETRYING', 'BLOCKED', 'RUNNING')", "$2", "'overlap policy CANCEL_RUNNING'")},
     ${releaseNextInOrder("upd", "$3::float8")}
     SELECT upd.id, upd.from_status, released_rows.released FROM upd ${RELEASED_JOIN}`,
    [scheduleId, actor, horizonMs],
  );
  return {
    wasRunning: res.rows.filter((r) => r.from_status === "RUNNING").map((r) => r.id as string),
    dispatch: mapReleased(res.rows),
  };
}
