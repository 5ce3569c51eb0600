import { ConflictError, NotFoundError, isWellFormedId } from "@tasklane/core";
import { withTransaction, type Database } from "../database.js";
import { refuseDeadOnly } from "./dead-only-refusal.js";
import { dispatchOutboxCtes, mapDispatchRow, type DispatchIntent } from "../outbox/dispatch-intent.js";
import { mapTaskRow, taskColumnsOf, type TaskRecord } from "../tasks/task-record.js";
import { RETURNING_FOR_CTES, enqueuedGenerationExpr, eventInsert, sameId } from "./sql-fragments.js";

/**
 * DEAD -> QUEUED with a fresh attempt budget (attempts back to 0, against
 * maxAttempts again; history kept). The attempts made so far move to
 * attempts_before_redrive, so the next attempt's number goes on from the
 * last one (4 after 1, 2, 3), never repeating one in the history or events. Not a workflow's task: when it died its dependants were SKIPPED and
 * the workflow ended FAILED (or will), so running it again would change
 * nothing downstream; the workflow is submitted again instead.
 */
export async function redriveTask(
  db: Database,
  tenantId: string,
  id: string,
  actor: string,
  horizonMs: number,
): Promise<{ task: TaskRecord; dispatch: DispatchIntent[] }> {
  if (!isWellFormedId("task", id)) throw new NotFoundError("Task", id);
  return withTransaction(db.pool, async (client) => {
    const res = await client.query(
      `WITH cand AS (
         SELECT t.id, t.status AS from_status FROM tasks t
         WHERE t.id = $1 AND t.tenant_id = $2 AND t.status = 'DEAD' AND t.workflow_id IS NULL FOR UPDATE OF t
       ),
       upd AS (
         UPDATE tasks t SET status = 'QUEUED', attempts = 0, attempts_before_redrive = t.attempts_before_redrive + t.attempts,
           run_at = now(), completed_at = NULL, result = NULL,
           dispatch_generation = t.dispatch_generation + 1, updated_at = now(),
           enqueued_generation = ${enqueuedGenerationExpr("t.dispatch_generation + 1", "now()", "$4::float8")}
         FROM cand WHERE ${sameId("t", "cand")}
         RETURNING ${RETURNING_FOR_CTES}, cand.from_status
       ),
       ev AS (${eventInsert("upd", "$3", "'redrive'")}),
       ${dispatchOutboxCtes("ob", "upd", "$4::float8")}
       SELECT ob.outbox_id, ${taskColumnsOf("upd")} FROM upd JOIN queues q ON q.id = upd.queue_id
       LEFT JOIN ob ON ob.task_id = upd.id`,
      [id, tenantId, actor, horizonMs],
    );
    const row = res.rows[0];
    if (row) {
      const dispatch = row.outbox_id != null ? [mapDispatchRow({ ...row, task_id: row.id })] : [];
      return { task: mapTaskRow(row), dispatch };
    }
    const inWorkflow = await client.query("SELECT 1 FROM tasks WHERE id = $1 AND tenant_id = $2 AND status = 'DEAD' AND workflow_id IS NOT NULL", [id, tenantId]);
    if (inWorkflow.rowCount) {
      throw new ConflictError("A workflow's task is not redriven on its own: its dependants were skipped when it died. Submit the workflow again");
    }
    return refuseDeadOnly(client, tenantId, id, "redriven");
  });
}
