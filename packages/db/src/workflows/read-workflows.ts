import { isWellFormedId } from "@tasklane/core";
import type { Queryable } from "../database.js";
import { TASK_COLUMNS, mapTaskRow } from "../tasks/task-record.js";
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

/** Each workflow's tasks in submission order, with their keys and dependencies. */
export async function listWorkflowTasks(db: { pool: Queryable }, tenantId: string, workflowIds: readonly string[]): Promise<Map<string, WorkflowTaskRecord[]>> {
  const byWorkflow = new Map<string, WorkflowTaskRecord[]>(workflowIds.map((id) => [id, []]));
  if (workflowIds.length === 0) return byWorkflow;
  const res = await db.pool.query(
    `SELECT ${TASK_COLUMNS},
       COALESCE((SELECT array_agg(e.parent_key ORDER BY e.parent_key) FROM workflow_edges e
                 WHERE e.workflow_id = t.workflow_id AND e.child_key = t.workflow_key), '{}') AS depends_on
     FROM tasks t JOIN queues q ON q.id = t.queue_id
     WHERE t.workflow_id = ANY($1::text[]) AND t.tenant_id = $2
     ORDER BY t.id`,
    [[...workflowIds], tenantId],
  );
  for (const row of res.rows) {
    const task = mapTaskRow(row);
    byWorkflow.get(task.workflowId as string)?.push({ key: task.workflowKey as string, dependsOn: row.depends_on as string[], task });
  }
  return byWorkflow;
}
