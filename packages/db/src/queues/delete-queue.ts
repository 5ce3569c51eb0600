/**
 * deleteQueue: removes a queue that has nothing left to run, frees its name
 * and its place under MAX_QUEUES_PER_TENANT, and takes its finished tasks
 * (with their attempts and audit events, which a trigger deletes with each
 * task) along, as deleting a Cloud Tasks or SQS queue deletes its messages:
 * tasks reference their queue by (tenant_id, queue_id), so keeping them would
 * keep the queue. Delivery log rows stay until retention, as for any task.
 *
 * Refused, writing nothing (CONFLICT), while
 * - the queue has unfinished tasks (SCHEDULED, QUEUED, RUNNING, RETRYING,
 *   BLOCKED): purgeQueue cancels the waiting ones, running ones end or are
 *   cancelled (cancelTask);
 * - a live schedule's template names it: its next occurrence would have no
 *   queue (delete the schedule or point it elsewhere first);
 * - a RUNNING workflow has tasks in it: their results feed its next tasks
 *   (retention keeps them for the same reason).
 *
 * The finished tasks go a batch per statement first, so a queue with 100,000
 * of them is never one long transaction; the queue row goes last, under its
 * lock, after the checks are made again. A submission racing the deletion
 * either commits first (the check then sees an unfinished task: CONFLICT,
 * with the finished history already gone) or, once the lock is held, waits
 * for it and finds no queue.
 */
import { ConflictError } from "@tasklane/core";
import type pg from "pg";
import type { Queryable } from "../database.js";
import { withTransaction, type Database } from "../database.js";

/** Finished tasks deleted per statement. @defaultValue 1000 */
export const DELETE_QUEUE_BATCH = 1000;

const FINISHED = ["SUCCEEDED", "DEAD", "CANCELLED", "SKIPPED"] as const;
const UNFINISHED = `('SCHEDULED', 'QUEUED', 'RUNNING', 'RETRYING', 'BLOCKED')`;

export interface DeletedQueue {
  /** Finished tasks deleted with it. */
  tasks: number;
}

/** The queue's unfinished tasks, by status, from its counters (never counting task rows). */
const UNFINISHED_COUNTS_SQL = `SELECT status::text AS status, sum(tasks)::bigint AS n FROM queue_counters
  WHERE queue_id = $1 AND status IN ${UNFINISHED} GROUP BY status HAVING sum(tasks) > 0 ORDER BY status`;

/** Live schedules whose task template names the queue (at most a few named). */
const SCHEDULES_SQL = `SELECT name FROM schedules
  WHERE tenant_id = $1 AND deleted_at IS NULL AND template->>'queue' = $2 ORDER BY name LIMIT 6`;

/**
 * A task of the queue in a RUNNING workflow. tasks_queue_workflow_idx (queue_id, workflow_id) serves
 * both ways of reading it, and the planner takes the smaller side: the tenant's running workflows,
 * each probed in the index, or the queue's workflow tasks, each workflow probed by primary key.
 * Without it the look walked every workflow task of every tenant through (workflow_id, workflow_key):
 * 300,000 index entries, 65 ms, with 100,000 running workflows; and it runs once under the queue's lock.
 */
const RUNNING_WORKFLOW_SQL = `SELECT w.id FROM workflows w
  WHERE w.tenant_id = $1 AND w.status = 'RUNNING'
    AND EXISTS (SELECT 1 FROM tasks t WHERE t.queue_id = $2 AND t.workflow_id = w.id)
  LIMIT 1`;

/**
 * $1 tenant, $2 queue, $3 status, $4 cursor (the last id of the previous batch, descending; null at first), $5 batch.
 * Walks the tenant's tasks of one finished status by (tenant_id, status, id DESC), `batch` index entries at a time,
 * and deletes the queue's among them: no index leads with queue_id over every finished task (only over DEAD ones and
 * workflow tasks), and bounding the rows matched instead let one
 * statement read through every finished task of the tenant's other queues to find its batch.
 */
const DELETE_FINISHED_SQL = `WITH scanned AS (
    SELECT t.id, t.queue_id FROM tasks t
    WHERE t.tenant_id = $1 AND t.status = $3::"TaskStatus" AND ($4::text IS NULL OR t.id < $4)
    ORDER BY t.id DESC LIMIT $5
  ),
  -- = ANY(ARRAY[s.id]): one primary-key probe per task (sql-fragments.ts sameId), never a walk of an index
  -- over finished tasks tested against the batch, which young statistics made look cheap.
  del AS (
    DELETE FROM tasks d USING scanned s
    WHERE s.queue_id = $2 AND d.id = ANY(ARRAY[s.id]) AND d.status = $3::"TaskStatus"
    RETURNING 1
  )
  SELECT (SELECT count(*) FROM scanned)::int AS found, (SELECT min(id) FROM scanned) AS last, (SELECT count(*) FROM del)::int AS deleted`;

type BatchRow = { found: number; last: string | null; deleted: number };

/** CONFLICT when the queue cannot be deleted now (see the file's comment). */
export async function assertQueueDeletable(q: Queryable, tenantId: string, queue: { id: string; name: string }): Promise<void> {
  const unfinished = await q.query<{ status: string; n: string }>(UNFINISHED_COUNTS_SQL, [queue.id]);
  if (unfinished.rows.length > 0) {
    const counts = unfinished.rows.map((r) => `${r.n} ${r.status}`).join(", ");
    throw new ConflictError(
      `Queue ${JSON.stringify(queue.name)} has unfinished tasks (${counts}): purgeQueue cancels the waiting ones; running ones must end or be cancelled first`,
      { reason: "QUEUE_NOT_EMPTY" },
    );
  }
  const schedules = await q.query<{ name: string }>(SCHEDULES_SQL, [tenantId, queue.name]);
  if (schedules.rows.length > 0) {
    const names = schedules.rows.slice(0, 5).map((r) => JSON.stringify(r.name)).join(", ");
    throw new ConflictError(
      `Queue ${JSON.stringify(queue.name)} is the target of schedule${schedules.rows.length > 1 ? "s" : ""} ${names}${schedules.rows.length > 5 ? " and more" : ""}: delete them or point them at another queue first`,
      { reason: "QUEUE_HAS_SCHEDULES" },
    );
  }
  const workflow = await q.query<{ id: string }>(RUNNING_WORKFLOW_SQL, [tenantId, queue.id]);
  if (workflow.rows[0] !== undefined) {
    throw new ConflictError(
      `Queue ${JSON.stringify(queue.name)} holds tasks of workflow ${workflow.rows[0].id}, still running: their results feed its next tasks; delete the queue once it has finished`,
      { reason: "QUEUE_IN_RUNNING_WORKFLOW" },
    );
  }
}

/**
 * Deletes the queue `queue` (found by the caller) and its finished tasks.
 * Returns null when the queue was gone by the time its row was locked.
 */
export async function deleteQueue(db: Database, tenantId: string, queue: { id: string; name: string }, batch = DELETE_QUEUE_BATCH): Promise<DeletedQueue | null> {
  // Refusals first, before anything is deleted.
  await assertQueueDeletable(db.pool, tenantId, queue);
  let tasks = 0;
  for (const status of FINISHED) {
    let cursor: string | null = null;
    for (;;) {
      const res: pg.QueryResult<BatchRow> = await db.pool.query<BatchRow>(DELETE_FINISHED_SQL, [tenantId, queue.id, status, cursor, batch]);
      const row: BatchRow | undefined = res.rows[0];
      tasks += row?.deleted ?? 0;
      if (row === undefined || row.found < batch || row.last === null) break;
      cursor = row.last;
    }
  }
  return withTransaction(db.pool, async (client) => {
    // Held until commit: a task insert checks its queue key (FOR KEY SHARE on this row), so none commits meanwhile.
    const locked = await client.query("SELECT id FROM queues WHERE id = $1 AND tenant_id = $2 FOR UPDATE", [queue.id, tenantId]);
    if (locked.rowCount === 0) return null;
    await assertQueueDeletable(client, tenantId, queue);
    // Finished tasks that arrived after their status's walk go with it (ON DELETE CASCADE), a handful at most.
    const cascaded = await client.query("SELECT COALESCE(sum(tasks), 0)::int AS n FROM queue_counters WHERE queue_id = $1", [queue.id]);
    await client.query("DELETE FROM queues WHERE id = $1 AND tenant_id = $2", [queue.id, tenantId]);
    return { tasks: tasks + Number((cascaded.rows[0] as { n: number }).n) };
  });
}
