import { NotFoundError, isWellFormedId } from "@tasklane/core";
import { withTransaction, type Database } from "../database.js";
import { refuseDeadOnly } from "./dead-only-refusal.js";
import { mapTaskRow, taskColumnsOf, type TaskRecord } from "../tasks/task-record.js";
import { RETURNING_FOR_CTES, eventInsert, notifyOutboxInsert, sameId } from "./sql-fragments.js";
import {
  DEAD_LETTER_BATCH_CANDIDATES,
  FOUND_COUNT,
  deadLetterCandidatesCte,
  deadLetterScope,
  inDeadLetterBatches,
  runBatchStatement,
  type DeadLetterBatchOptions,
  type DeadLetterBatchResult,
} from "./dead-letter-batches.js";

/**
 * The discard transition's CTEs (`cand`, `upd`, `ev`, `nt`), shared by
 * discardTask and discardDeadTasks: the rows `candidates` selects (id,
 * from_status; DEAD tasks, locked) become CANCELLED. Callers put WITH (and
 * CTEs of their own) before it and their SELECT after it.
 */
export function discardCtes(candidates: string, actorParam: string): string {
  return `cand AS (${candidates}),
    upd AS (
      UPDATE tasks t SET status = 'CANCELLED', updated_at = now()
      FROM cand WHERE ${sameId("t", "cand")}
      RETURNING ${RETURNING_FOR_CTES}, cand.from_status
    ),
    ev AS (${eventInsert("upd", actorParam, "'discard'")}),
    nt AS (${notifyOutboxInsert("upd")})`;
}

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
      `WITH ${discardCtes(
        `SELECT t.id, t.status AS from_status FROM tasks t
         WHERE t.id = $1 AND t.tenant_id = $2 AND t.status = 'DEAD' FOR UPDATE OF t`,
        "$3",
      )}
       SELECT ${taskColumnsOf("upd")} FROM upd JOIN queues q ON q.id = upd.queue_id`,
      [id, tenantId, actor],
    );
    const row = res.rows[0];
    if (row) return mapTaskRow(row);
    return refuseDeadOnly(client, tenantId, id, "discarded");
  });
}

/**
 * discardTask for many: up to `max` of the tenant's DEAD tasks (of one
 * queue, or all), the one that died first first, each as discardTask does
 * it (workflow tasks included, as discardTask takes them), a statement of up
 * to DEAD_LETTER_STATEMENT_BATCH at a time (dead-letter-batches.ts).
 */
export async function discardDeadTasks(db: Database, tenantId: string, options: DeadLetterBatchOptions): Promise<DeadLetterBatchResult> {
  const scope = await deadLetterScope(db.pool, tenantId, options.queue);
  const params: unknown[] = [tenantId, scope.diedBy, 0, options.actor];
  const queueParam = scope.queueId === null ? null : `$${params.push(scope.queueId)}`;
  const sql = `WITH ${deadLetterCandidatesCte({ withWorkflowTasks: true, queueParam })},
    ${discardCtes(DEAD_LETTER_BATCH_CANDIDATES, "$4")}
    SELECT (SELECT count(*)::int FROM upd) AS changed, ${FOUND_COUNT}`;
  return inDeadLetterBatches(options, async (batch) => {
    params[2] = batch;
    const res = await runBatchStatement(db, sql, params);
    const row = res.rows[0] as { changed: number; found: number };
    return { changed: row.changed, found: row.found };
  });
}
