import { NotFoundError, isWellFormedId } from "@tasklane/core";
import { withTransaction, type Database } from "../database.js";
import { refuseDeadOnly } from "./dead-only-refusal.js";
import { mapTaskRow, taskColumnsOf, type TaskRecord } from "../tasks/task-record.js";
import { RETURNING_FOR_CTES, eventInsert, notifyOutboxInsert, sameId } from "./sql-fragments.js";

/**
 * DEAD -> CANCELLED: the tenant gives up on a dead task, so it leaves the
 * dead-letter queue. Attempts, result and error stay as they were. The task
 * reached CANCELLED, so webhooks and its callbackUrl hear task.cancelled, as
 * from cancelTask: the outbox row commits with the change (a receiver that
 * mirrors statuses would otherwise keep it DEAD for good). It follows the
 * task.dead sent when it died.
 */
export async function discardTask(db: Database, tenantId: string, id: string, actor: string): Promise<TaskRecord> {
  if (!isWellFormedId("task", id)) throw new NotFoundError("Task", id);
  return withTransaction(db.pool, async (client) => {
    const res = await client.query(
      `WITH cand AS (
         SELECT t.id, t.status AS from_status FROM tasks t
         WHERE t.id = $1 AND t.tenant_id = $2 AND t.status = 'DEAD' FOR UPDATE OF t
       ),
       upd AS (
         UPDATE tasks t SET status = 'CANCELLED', updated_at = now()
         FROM cand WHERE ${sameId("t", "cand")}
         RETURNING ${RETURNING_FOR_CTES}, cand.from_status
       ),
       ev AS (${eventInsert("upd", "$3", "'discard'")}),
       nt AS (${notifyOutboxInsert("upd")})
       SELECT ${taskColumnsOf("upd")} FROM upd JOIN queues q ON q.id = upd.queue_id`,
      [id, tenantId, actor],
    );
    const row = res.rows[0];
    if (row) return mapTaskRow(row);
    return refuseDeadOnly(client, tenantId, id, "discarded");
  });
}
