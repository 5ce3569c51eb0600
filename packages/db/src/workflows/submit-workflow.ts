import { newId, type WorkflowSpec } from "@tasklane/core";
import { queueGoneAsNotFound } from "../queues/queue-gone.js";
import type pg from "pg";
import { withTransaction, type Database } from "../database.js";
import type { DispatchIntent } from "../outbox/dispatch-intent.js";
import { insertTaskRefs, type SubmitOptions, type SubmittedTaskRef } from "../tasks/submit-tasks.js";
import { WORKFLOW_COLUMNS, mapWorkflowRow, type WorkflowRecord } from "./workflow-record.js";

export interface SubmitWorkflowResult {
  workflow: WorkflowRecord;
  /**
   * The tasks it created, in input order (none for an idempotent repeat). Refs
   * only: reading the rows back sent their payloads over again (20 tasks of
   * 200 KiB: 4.1 MB), and the API's answer reads what it is asked for itself.
   */
  tasks: { key: string; task: SubmittedTaskRef }[];
  /** False when the idempotency key had been used: nothing was written. */
  created: boolean;
  /** Dispatch intents of the root PUSH tasks, for the post-commit fast path. */
  dispatch: DispatchIntent[];
}

/**
 * Writes a workflow in one transaction: the workflow row, its edges and its
 * tasks (roots QUEUED, the others BLOCKED until their parents succeed). The
 * graph must already have passed validateWorkflowGraph. An idempotency key is
 * enforced by the (tenant_id, idempotency_key) unique index with ON CONFLICT,
 * so concurrent submissions of one key yield one workflow.
 */
export async function submitWorkflow(db: Database, tenantId: string, spec: WorkflowSpec, options: SubmitOptions): Promise<SubmitWorkflowResult> {
  // A queue deleted while the insert waited for its key is NOT_FOUND, as a name no queue has (queue-gone.ts).
  return queueGoneAsNotFound(() => insertWorkflow(db, tenantId, spec, options), () => spec.tasks.map((t) => t.queue));
}

async function insertWorkflow(db: Database, tenantId: string, spec: WorkflowSpec, options: SubmitOptions): Promise<SubmitWorkflowResult> {
  return withTransaction(db.pool, async (client) => {
    const inserted = await client.query(
      `INSERT INTO workflows AS w (id, tenant_id, name, idempotency_key) VALUES ($1, $2, $3, $4)
       ON CONFLICT (tenant_id, idempotency_key) DO NOTHING
       RETURNING ${WORKFLOW_COLUMNS}`,
      [newId("wf"), tenantId, spec.name, spec.idempotencyKey],
    );
    const row = inserted.rows[0];
    if (!row) return { workflow: await existing(client, tenantId, spec.idempotencyKey), tasks: [], created: false, dispatch: [] };
    const workflow = mapWorkflowRow(row);
    const edges = spec.tasks.flatMap((t) => t.dependsOn.map((parent) => [parent, t.key] as const));
    await client.query(
      `INSERT INTO workflow_edges (workflow_id, tenant_id, parent_key, child_key)
       SELECT $1, $2, parent_key, child_key FROM unnest($3::text[], $4::text[]) AS e(parent_key, child_key)`,
      [workflow.id, tenantId, edges.map((e) => e[0]), edges.map((e) => e[1])],
    );
    const submitted = await insertTaskRefs(
      client,
      tenantId,
      spec.tasks.map(({ key, dependsOn, ...task }) => ({
        ...task,
        workflowId: workflow.id,
        workflowKey: key,
        initialStatus: dependsOn.length > 0 ? "BLOCKED" : null,
      })),
      options,
    );
    const tasks = spec.tasks.map((t, i) => ({ key: t.key, task: submitted.tasks[i] as SubmittedTaskRef }));
    return { workflow, tasks, created: true, dispatch: submitted.dispatch };
  });
}

/** The workflow that first used the key (its transaction committed before our insert gave way). */
async function existing(client: pg.PoolClient, tenantId: string, key: string | null): Promise<WorkflowRecord> {
  const res = await client.query(`SELECT ${WORKFLOW_COLUMNS} FROM workflows w WHERE w.tenant_id = $1 AND w.idempotency_key = $2`, [tenantId, key]);
  const row = res.rows[0];
  if (!row) throw new Error(`workflow with idempotency key ${String(key)} vanished after a conflict`);
  return mapWorkflowRow(row);
}
