import { ConflictError, NotFoundError, isWellFormedId } from "@tasklane/core";
import { withTransaction, type Database } from "../database.js";
import { refuseDeadOnly } from "./dead-only-refusal.js";
import { dispatchOutboxCtes, mapDispatchRow, type DispatchIntent } from "../outbox/dispatch-intent.js";
import { mapTaskRow, taskColumnsOf, type TaskRecord } from "../tasks/task-record.js";
import { RETURNING_FOR_CTES, enqueuedGenerationExpr, eventInsert, sameId } from "./sql-fragments.js";
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

export { DEAD_LETTER_STATEMENT_BATCH, type DeadLetterBatchOptions, type DeadLetterBatchResult } from "./dead-letter-batches.js";

/**
 * The redrive transition's CTEs (`cand`, `upd`, `ev`, and `ob` with its
 * outbox rows), shared by redriveTask and redriveDeadTasks: the rows
 * `candidates` selects (id, from_status; DEAD tasks outside workflows, locked)
 * go back to QUEUED, due now. Callers put WITH (and CTEs of their own) before
 * it and their SELECT after it.
 */
export function redriveCtes(candidates: string, actorParam: string, horizonParam: string): string {
  return `cand AS (${candidates}),
    upd AS (
      UPDATE tasks t SET status = 'QUEUED', attempts = 0, attempts_before_redrive = t.attempts_before_redrive + t.attempts,
        run_at = now(), completed_at = NULL, result = NULL,
        dispatch_generation = t.dispatch_generation + 1, updated_at = now(),
        enqueued_generation = ${enqueuedGenerationExpr("t.dispatch_generation + 1", "now()", horizonParam)}
      FROM cand WHERE ${sameId("t", "cand")}
      RETURNING ${RETURNING_FOR_CTES}, cand.from_status
    ),
    ev AS (${eventInsert("upd", actorParam, "'redrive'")}),
    ${dispatchOutboxCtes("ob", "upd", horizonParam)}`;
}

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
      `WITH ${redriveCtes(
        `SELECT t.id, t.status AS from_status FROM tasks t
         WHERE t.id = $1 AND t.tenant_id = $2 AND t.status = 'DEAD' AND t.workflow_id IS NULL FOR UPDATE OF t`,
        "$3",
        "$4::float8",
      )}
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

/** One committed statement of redriveDeadTasks: what to dispatch, and the PULL queues to wake. */
export interface RedriveBatch {
  redriven: number;
  /** PUSH tasks' dispatch intents (due now): add them to Redis after the commit. */
  dispatch: DispatchIntent[];
  /** PULL queues that got tasks back: ring their long polls. */
  pullQueueIds: string[];
}

export interface RedriveDeadTasksOptions extends DeadLetterBatchOptions {
  /** The dispatch horizon (ms); redriven tasks are due now, so within it. */
  horizonMs: number;
  /** After each committed statement, for the caller's post-commit dispatch. */
  afterBatch?(batch: RedriveBatch): Promise<void>;
}

/**
 * redriveTask for many: up to `max` of the tenant's DEAD tasks outside
 * workflows (of one queue, or all), the one that died first first, each as
 * redriveTask does it, a statement of up to DEAD_LETTER_STATEMENT_BATCH at
 * a time (dead-letter-batches.ts). Workflow tasks are left and not counted,
 * as redriveTask refuses them.
 */
export async function redriveDeadTasks(db: Database, tenantId: string, options: RedriveDeadTasksOptions): Promise<DeadLetterBatchResult> {
  const scope = await deadLetterScope(db.pool, tenantId, options.queue);
  const params: unknown[] = [tenantId, scope.diedBy, 0, options.actor, options.horizonMs];
  const queueParam = scope.queueId === null ? null : `$${params.push(scope.queueId)}`;
  const sql = `WITH ${deadLetterCandidatesCte({ withWorkflowTasks: false, queueParam })},
    ${redriveCtes(DEAD_LETTER_BATCH_CANDIDATES, "$4", "$5::float8")}
    SELECT upd.id AS task_id, upd.tenant_id, upd.queue_id, upd.priority, upd.run_at, upd.dispatch_generation, upd.trace_parent,
      ob.outbox_id, q.mode, ${FOUND_COUNT}
    FROM upd JOIN queues q ON q.id = upd.queue_id LEFT JOIN ob ON ob.task_id = upd.id`;
  return inDeadLetterBatches(options, async (batch) => {
    params[2] = batch;
    const res = await runBatchStatement(db, sql, params);
    const dispatch = res.rows.filter((r) => r.outbox_id != null).map(mapDispatchRow);
    const pullQueueIds = [...new Set(res.rows.filter((r) => r.mode === "PULL").map((r) => r.queue_id as string))];
    if (res.rows.length > 0) await options.afterBatch?.({ redriven: res.rows.length, dispatch, pullQueueIds });
    return { changed: res.rows.length, found: (res.rows[0]?.found as number | undefined) ?? 0 };
  });
}
