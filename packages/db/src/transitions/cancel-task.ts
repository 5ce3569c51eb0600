import { ConflictError, NotFoundError, isWellFormedId } from "@tasklane/core";
import { withTransaction, type Database } from "../database.js";
import { mapTaskRow, taskColumnsOf, type TaskRecord } from "../tasks/task-record.js";
import { mapReleased, type DispatchIntent } from "../outbox/dispatch-intent.js";
import { RELEASED_JOIN, RETURNING_FOR_CTES, eventInsert, notifyOutboxInsert, releaseNextInOrder } from "./sql-fragments.js";

export interface CancelResult {
  task: TaskRecord;
  /** The next task of the same ordering key, now startable. */
  dispatch: DispatchIntent[];
  /** The task was RUNNING: its executor must be told to stop (PUSH abort, PULL heartbeat). */
  wasRunning: boolean;
}

/**
 * Cancels a task in any non-terminal state. A RUNNING task becomes CANCELLED at
 * once with cancelRequested set; its lease stays valid for heartbeats so a pull
 * worker can stop cleanly, but any outcome it reports later is refused (the
 * status is no longer RUNNING).
 */
export async function cancelTask(db: Database, tenantId: string, id: string, actor: string, horizonMs = 300_000): Promise<CancelResult> {
  if (!isWellFormedId("task", id)) throw new NotFoundError("Task", id);
  return withTransaction(db.pool, async (client) => {
    const res = await client.query(
      `WITH cand AS (
         SELECT t.id, t.status AS from_status, t.lease_token AS old_token FROM tasks t
         WHERE t.id = $1 AND t.tenant_id = $2
           AND t.status IN ('SCHEDULED', 'QUEUED', 'RETRYING', 'BLOCKED', 'RUNNING') FOR UPDATE OF t
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
       ev AS (${eventInsert("upd", "$3")}),
       nt AS (${notifyOutboxInsert("upd")}),
       ${releaseNextInOrder("upd", "$4::float8")}
       SELECT upd.from_status, ${taskColumnsOf("upd")}, released_rows.released FROM upd JOIN queues q ON q.id = upd.queue_id
       ${RELEASED_JOIN}`,
      [id, tenantId, actor, horizonMs],
    );
    const row = res.rows[0];
    if (row) return { task: mapTaskRow(row), wasRunning: row.from_status === "RUNNING", dispatch: mapReleased(res.rows) };
    const exists = await client.query("SELECT status FROM tasks WHERE id = $1 AND tenant_id = $2", [id, tenantId]);
    if (!exists.rows[0]) throw new NotFoundError("Task", id);
    throw new ConflictError(`Task is already ${exists.rows[0].status as string}`);
  });
}
