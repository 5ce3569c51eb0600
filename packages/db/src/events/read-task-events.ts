import type { TaskStatus } from "@tasklane/core";
import type { Queryable } from "../database.js";
import type { TaskEventRow } from "./relay-window.js";

export interface TaskEventRead {
  /** Rows with id > cursor, ascending, at most `limit`. */
  rows: TaskEventRow[];
  /** The snapshot the rows were read in (`pg_current_snapshot()` as text). */
  snapshot: string;
}

interface ReadRow {
  snapshot: string;
  rows: Array<{
    id: string;
    task_id: string;
    tenant_id: string;
    queue_id: string | null;
    workflow_id: string | null;
    from_status: TaskStatus | null;
    to_status: TaskStatus;
    at: string;
  }>;
}

/**
 * The next events after `cursor`, in id order, and the snapshot they were read
 * in: one statement, so both come from the same snapshot (relay-window.ts
 * needs that to tell a hole that may still fill in from one that will not).
 * The walk is on the primary key; the task join adds what subscribers filter on.
 */
export async function readTaskEventsAfter(client: Queryable, cursor: bigint, limit: number): Promise<TaskEventRead> {
  const res = await client.query<ReadRow>(
    `SELECT pg_current_snapshot()::text AS snapshot,
       COALESCE((
         SELECT json_agg(r ORDER BY r.n) FROM (
           SELECT e.id AS n, e.id::text AS id, e.task_id, e.tenant_id, t.queue_id, t.workflow_id,
                  e.from_status, e.to_status, e.at
             FROM task_events e LEFT JOIN tasks t ON t.id = e.task_id
            WHERE e.id > $1::bigint
            ORDER BY e.id LIMIT $2
         ) r
       ), '[]'::json) AS rows`,
    [cursor.toString(), limit],
  );
  const row = res.rows[0];
  if (row === undefined) throw new Error("snapshot query returned no row");
  return {
    snapshot: row.snapshot,
    rows: row.rows.map((r) => ({
      id: r.id,
      taskId: r.task_id,
      tenantId: r.tenant_id,
      queueId: r.queue_id,
      workflowId: r.workflow_id,
      fromStatus: r.from_status,
      toStatus: r.to_status,
      at: new Date(r.at),
    })),
  };
}

/**
 * Whether every transaction that was in progress in `snapshot` has finished
 * (committed or rolled back). pg_xact_status answers NULL for a transaction
 * too old to look up, which is long finished too.
 */
export async function snapshotSettled(client: Queryable, snapshot: string): Promise<boolean> {
  const res = await client.query<{ settled: boolean }>(
    `SELECT NOT EXISTS (
       SELECT 1 FROM pg_snapshot_xip($1::pg_snapshot) x WHERE pg_xact_status(x) = 'in progress'
     ) AS settled`,
    [snapshot],
  );
  return res.rows[0]?.settled ?? false;
}
