import { ConflictError, NotFoundError, isWellFormedId } from "@tasklane/core";
import type pg from "pg";
import { withTransaction, type Database, type Queryable } from "../database.js";
import { cancelCtes } from "../transitions/sql-fragments.js";
import { lockWorkflows, workflowNotifyInsert } from "../transitions/workflow-progress.js";
import { WORKFLOW_COLUMNS, mapWorkflowRow, type WorkflowRecord } from "./workflow-record.js";

export interface CancelWorkflowResult {
  workflow: WorkflowRecord;
  /** Tasks that were RUNNING: their executors must be told to stop (PUSH abort, PULL heartbeat). */
  wasRunning: string[];
}

const UNBLOCKED = ["SCHEDULED", "QUEUED", "RETRYING", "RUNNING"];

/**
 * Cancels every unfinished task of a workflow (a RUNNING one like cancelTask
 * does: CANCELLED with cancelRequested, its late outcome refused) and marks
 * the workflow CANCELLED. A finished workflow is CONFLICT.
 *
 * Lock order (workflow-progress.ts): the tasks that are not BLOCKED first,
 * then the workflow row, then the BLOCKED tasks. A child released by a parent
 * that committed between the first sweep and the workflow lock is runnable
 * by then; with no BLOCKED task left nothing else can appear, so one more
 * sweep after the commit catches it.
 */
export async function cancelWorkflow(db: Database, tenantId: string, id: string, actor: string): Promise<CancelWorkflowResult> {
  if (!isWellFormedId("wf", id)) throw new NotFoundError("Workflow", id);
  const wasRunning = await withTransaction(db.pool, async (client) => {
    const pre = await client.query<{ status: string }>("SELECT status FROM workflows WHERE id = $1 AND tenant_id = $2", [id, tenantId]);
    const before = pre.rows[0]?.status;
    if (before === undefined) throw new NotFoundError("Workflow", id);
    if (before !== "RUNNING") throw new ConflictError(`Workflow is already ${before}`);
    const running = await cancelTasks(client, id, actor, UNBLOCKED);
    const status = (await lockWorkflows(client, [id])).get(id);
    // Another cancel, or the last task finishing, got there first: undo this sweep.
    if (status !== "RUNNING") throw new ConflictError(`Workflow is already ${String(status)}`);
    await cancelTasks(client, id, actor, ["BLOCKED"]);
    await markCancelled(client, id);
    return running;
  });
  const late = await cancelTasks(db.pool, id, actor, UNBLOCKED);
  const res = await db.pool.query(`SELECT ${WORKFLOW_COLUMNS} FROM workflows w WHERE w.id = $1`, [id]);
  return { workflow: mapWorkflowRow(res.rows[0] as Record<string, unknown>), wasRunning: [...wasRunning, ...late] };
}

/** Cancels the workflow's tasks in the given statuses, in id order (the lock order batch completions use). Returns the ids that were RUNNING. */
async function cancelTasks(q: Queryable, workflowId: string, actor: string, from: string[]): Promise<string[]> {
  const res = await q.query<{ id: string; from_status: string }>(
    // Id order: the lock order batch completions use.
    `${cancelCtes(`t.workflow_id = $1 AND t.status = ANY($3::"TaskStatus"[])`, "$2", "'workflow cancelled'", "ORDER BY t.id")}
     SELECT upd.id, upd.from_status FROM upd`,
    [workflowId, actor, from],
  );
  return res.rows.filter((r) => r.from_status === "RUNNING").map((r) => r.id);
}

async function markCancelled(client: pg.PoolClient, workflowId: string): Promise<void> {
  await client.query(
    `WITH fin AS (
       UPDATE workflows w SET status = 'CANCELLED', completed_at = now() WHERE w.id = $1 AND w.status = 'RUNNING'
       RETURNING w.id, w.tenant_id, w.status
     ),
     finnt AS (${workflowNotifyInsert("fin")})
     SELECT 1`,
    [workflowId],
  );
}
