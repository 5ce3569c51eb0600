import { ConflictError, NotFoundError, isWellFormedId } from "@tasklane/core";
import type pg from "pg";
import { withTransaction, type Database } from "../database.js";
import { mapTaskRow, taskColumnsOf, type TaskRecord } from "../tasks/task-record.js";
import { mapReleased, type DispatchIntent } from "../outbox/dispatch-intent.js";
import { RELEASED_JOIN, cancelCtes, releaseNextInOrder } from "./sql-fragments.js";
import { advanceWorkflows, lockWorkflows, type WorkflowProgress } from "./workflow-progress.js";

export interface CancelResult {
  task: TaskRecord;
  /** The next task of the same ordering key, now startable. */
  dispatch: DispatchIntent[];
  /** The task was RUNNING: its executor must be told to stop (PUSH abort, PULL heartbeat). */
  wasRunning: boolean;
  /** A workflow task's dependants are SKIPPED; the workflow may have finished. */
  workflows: WorkflowProgress;
}

const CANCELLABLE = ["SCHEDULED", "QUEUED", "RETRYING", "BLOCKED", "RUNNING"];
const CANCELLABLE_UNBLOCKED = CANCELLABLE.filter((s) => s !== "BLOCKED");

/** $1 task, $2 tenant, $3 actor, $4 horizon (ms), $5 the statuses it may be cancelled from. */
const CANCEL_SQL = `${cancelCtes(`t.id = $1 AND t.tenant_id = $2 AND t.status = ANY($5::"TaskStatus"[])`, "$3")},
  ${releaseNextInOrder("upd", "$4::float8")}
  SELECT upd.from_status, ${taskColumnsOf("upd")}, released_rows.released FROM upd JOIN queues q ON q.id = upd.queue_id
  ${RELEASED_JOIN}`;

/**
 * Cancels a task in any non-terminal state. A RUNNING task becomes CANCELLED at
 * once with cancelRequested set; its lease stays valid for heartbeats so a pull
 * worker can stop cleanly, but any outcome it reports later is refused (the
 * status is no longer RUNNING). In a workflow, everything downstream is SKIPPED
 * in the same transaction.
 */
export async function cancelTask(db: Database, tenantId: string, id: string, actor: string, horizonMs = 300_000): Promise<CancelResult> {
  if (!isWellFormedId("task", id)) throw new NotFoundError("Task", id);
  // A BLOCKED workflow task can be released while we wait for its workflow's
  // lock; the next round then takes it from its new status.
  for (let round = 0; round < 3; round++) {
    const result = await withTransaction(db.pool, (client) => cancelOnce(client, tenantId, id, actor, horizonMs));
    if (result !== null) return result;
  }
  throw new Error(`task ${id} kept leaving BLOCKED while being cancelled`);
}

async function cancelOnce(client: pg.PoolClient, tenantId: string, id: string, actor: string, horizonMs: number): Promise<CancelResult | null> {
  const pre = await client.query<{ status: string; workflow_id: string | null }>(
    "SELECT status, workflow_id FROM tasks WHERE id = $1 AND tenant_id = $2",
    [id, tenantId],
  );
  const current = pre.rows[0];
  if (!current) throw new NotFoundError("Task", id);
  // Lock order (workflow-progress.ts): a BLOCKED workflow task only under its workflow's lock, taken first.
  const blocked = current.workflow_id !== null && current.status === "BLOCKED";
  if (blocked) await lockWorkflows(client, [current.workflow_id as string]);
  const from = blocked ? ["BLOCKED"] : current.workflow_id !== null ? CANCELLABLE_UNBLOCKED : CANCELLABLE;
  const res = await client.query(CANCEL_SQL, [id, tenantId, actor, horizonMs, from]);
  const row = res.rows[0];
  if (row) {
    const task = mapTaskRow(row);
    const workflows = await advanceWorkflows(client, [task], actor, horizonMs);
    return { task, wasRunning: row.from_status === "RUNNING", dispatch: [...mapReleased(res.rows), ...workflows.dispatch], workflows };
  }
  const now = await client.query<{ status: string }>("SELECT status FROM tasks WHERE id = $1 AND tenant_id = $2", [id, tenantId]);
  const status = now.rows[0]?.status;
  if (status === undefined) throw new NotFoundError("Task", id);
  if (CANCELLABLE.includes(status)) return null;
  throw new ConflictError(`Task is already ${status}`);
}
