import { ANSWER_BODY_BYTES, ANSWER_TASK_ROWS, isWellFormedId, tooManyTaskRows, type BulkRead, type BulkReadAllowance } from "@tasklane/core";
import type { Queryable } from "../database.js";
import { bodyBytesOf, withheldBodiesSql } from "../tasks/page-body-budget.js";
import { TASK_COLUMNS, TASK_COLUMN_NAMES_BUT_BODIES, mapTaskRow } from "../tasks/task-record.js";
import { WORKFLOW_COLUMNS, mapWorkflowRow, type WorkflowRecord, type WorkflowTaskRecord } from "./workflow-record.js";

/** Null when absent or another tenant's: the two are indistinguishable to the caller. */
export async function getWorkflow(db: { pool: Queryable }, tenantId: string, id: string): Promise<WorkflowRecord | null> {
  if (!isWellFormedId("wf", id)) return null;
  const res = await db.pool.query(`SELECT ${WORKFLOW_COLUMNS} FROM workflows w WHERE w.id = $1 AND w.tenant_id = $2`, [id, tenantId]);
  return res.rows[0] ? mapWorkflowRow(res.rows[0]) : null;
}

/**
 * Newest first. Ids are time-ordered (UUIDv7), so the keyset is the id: `after`
 * is the id of the last workflow of the previous page (the contract's
 * `workflows` returns a plain list, so the id is the cursor a client has).
 * An unreadable cursor reads as "past the end", never as "from the start".
 */
export async function listWorkflows(db: { pool: Queryable }, tenantId: string, page: { first: number; after?: string | null }): Promise<WorkflowRecord[]> {
  if (page.after != null && !isWellFormedId("wf", page.after)) return [];
  const res = await db.pool.query(
    `SELECT ${WORKFLOW_COLUMNS} FROM workflows w
     WHERE w.tenant_id = $1 AND ($2::text IS NULL OR w.id < $2)
     ORDER BY w.id DESC LIMIT $3`,
    [tenantId, page.after ?? null, page.first],
  );
  return res.rows.map(mapWorkflowRow);
}

/**
 * How many tasks each workflow holds (0 for one with none or another
 * tenant's): from the unique (workflow_id, workflow_key) index, at most
 * MAX_WORKFLOW_TASKS entries a workflow.
 */
export async function countWorkflowTasks(db: { pool: Queryable }, tenantId: string, workflowIds: readonly string[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>(workflowIds.map((id) => [id, 0]));
  if (workflowIds.length === 0) return counts;
  const res = await db.pool.query<{ workflow_id: string; n: number }>(
    `SELECT t.workflow_id, count(*)::int AS n FROM tasks t
     WHERE t.workflow_id = ANY($1::text[]) AND t.tenant_id = $2 GROUP BY t.workflow_id`,
    [[...workflowIds], tenantId],
  );
  for (const row of res.rows) counts.set(row.workflow_id, row.n);
  return counts;
}

/**
 * Each workflow's tasks in submission order, with their keys and
 * dependencies, within what the answer has left (core's answer-budget.ts):
 * more tasks than `left.rows` is refused before any is read; past
 * `left.bytes` of payloads and results (in id order over all the
 * workflows) a task's bodies are withheld (WITHHELD_BODY) and stay in
 * Postgres. `used` is what the read took.
 */
export async function listWorkflowTasks(
  db: { pool: Queryable },
  tenantId: string,
  workflowIds: readonly string[],
  left: BulkReadAllowance = { bytes: ANSWER_BODY_BYTES, rows: ANSWER_TASK_ROWS },
): Promise<BulkRead<Map<string, WorkflowTaskRecord[]>>> {
  const byWorkflow = new Map<string, WorkflowTaskRecord[]>(workflowIds.map((id) => [id, []]));
  if (workflowIds.length === 0) return { value: byWorkflow, used: { bytes: 0, rows: 0 } };
  let total = 0;
  for (const n of (await countWorkflowTasks(db, tenantId, workflowIds)).values()) total += n;
  if (total > left.rows) {
    const what = workflowIds.length === 1 ? "This workflow's tasks" : "These workflows' tasks";
    throw tooManyTaskRows(what, total, left.rows, "size them with Workflow.taskCount and page one workflow's with tasks(filter: { workflowId })");
  }
  const candidates = `SELECT ${TASK_COLUMNS},
       COALESCE((SELECT array_agg(e.parent_key ORDER BY e.parent_key) FROM workflow_edges e
                 WHERE e.workflow_id = t.workflow_id AND e.child_key = t.workflow_key), '{}') AS depends_on
     FROM tasks t JOIN queues q ON q.id = t.queue_id
     WHERE t.workflow_id = ANY($1::text[]) AND t.tenant_id = $2`;
  const res = await db.pool.query(withheldBodiesSql(candidates, [...TASK_COLUMN_NAMES_BUT_BODIES, "depends_on"], "id", "$3"), [
    [...workflowIds],
    tenantId,
    left.bytes,
  ]);
  for (const row of res.rows) {
    const task = mapTaskRow(row);
    byWorkflow.get(task.workflowId as string)?.push({ key: task.workflowKey as string, dependsOn: row.depends_on as string[], task });
  }
  return { value: byWorkflow, used: { bytes: bodyBytesOf(res.rows), rows: res.rows.length } };
}
