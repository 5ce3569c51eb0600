/**
 * purgeQueue: cancels a queue's waiting tasks, a batch per transaction, so a
 * backlog of 100,000 is never one giant transaction nor holds its locks for
 * long. Each batch is the cancel transition (cancelCtes: conditional update,
 * audit event, NOTIFY outbox row for task.cancelled) on the tasks it finds
 * still waiting, locked in id order like every transition that waits for task
 * locks; counters follow from the tasks' triggers.
 *
 * What it takes:
 * - QUEUED, SCHEDULED and RETRYING tasks (the queue's lane index, highest lane
 *   first, a batch at a time, then locked by id);
 * - BLOCKED workflow tasks of the queue: they are its backlog too, and left
 *   alone they would enter the queue once their parents elsewhere succeed,
 *   right after it was purged. Each is cancelled as cancelTask cancels it:
 *   under its workflow's lock (lock order, workflow-progress.ts), its
 *   dependants SKIPPED, the workflow ending CANCELLED once nothing of it runs.
 * Never RUNNING tasks: their attempts finish (cancelTask stops one).
 *
 * Only tasks created before the purge started (created_at, Postgres's clock):
 * a submission racing the purge may survive it, and a steady stream of them
 * cannot keep it going forever. Repeating a purge is harmless: what is
 * already CANCELLED is no longer a candidate.
 *
 * Redis: a cancelled PUSH task's job stays where it is and is dropped when a
 * worker takes it (the start statement finds the task no longer runnable), as
 * for any cancelled task; a PULL task has none.
 */
import type pg from "pg";
import { withTransaction, type Database } from "../database.js";
import { mapReleased, type DispatchIntent } from "../outbox/dispatch-intent.js";
import { RELEASED_JOIN, cancelCandidatesCtes, cancelCtes, lockById, releaseNextInOrder } from "./sql-fragments.js";
import { advanceWorkflows, lockWorkflows, noProgress, type WorkflowProgress } from "./workflow-progress.js";

/** Tasks cancelled per transaction. @defaultValue 1000 */
export const PURGE_BATCH = 1000;

export interface PurgeOptions {
  actor: string;
  /** The dispatch horizon (ms): ordering keys' released tasks within it get an outbox row. */
  horizonMs: number;
  /** Tasks per transaction. @defaultValue PURGE_BATCH */
  batch?: number;
  /** After each committed batch: what it released, for the caller's post-commit dispatch. */
  onBatch?(batch: PurgeBatch): Promise<void>;
}

export interface PurgeBatch {
  cancelled: number;
  /** Ordering keys' next tasks now startable (PUSH, within the horizon): dispatch after commit. */
  dispatch: DispatchIntent[];
  workflows: WorkflowProgress;
}

export interface PurgeResult {
  cancelled: number;
  /** Of which BLOCKED workflow tasks. */
  blocked: number;
  /** Workflows the purge ended (CANCELLED, or FAILED when a task of theirs had died). */
  finishedWorkflows: number;
}

const WAITING = `('QUEUED', 'SCHEDULED', 'RETRYING')`;

/**
 * $1 queue, $2 purge start, $3 batch: the next batch, read unlocked from the
 * queue's waiting lanes (tasks_runnable_lane_idx: only this queue's waiting
 * tasks; cancelled ones leave it), highest lane first.
 */
const PICK_WAITING_SQL = `SELECT w.id FROM tasks w
  WHERE w.queue_id = $1 AND w.status IN ${WAITING} AND w.created_at <= $2
  ORDER BY w.queue_id, w.priority, w.run_at, w.id LIMIT $3`;

/**
 * $1 picked ids, $2 actor, $3 horizon (ms). The picked tasks, each locked by
 * a primary-key probe (lockById) in id order, those still waiting cancelled.
 * Only the ids and the status are tested: a task never changes tenant or
 * queue. Tested in a WHERE beside the ids, the queue and status let the
 * planner walk the queue's whole waiting lane (or, on young statistics, any
 * index over waiting tasks) testing each row against the 1,000 ids: ~850 ms a
 * batch at 50,000 waiting, 175 s for a purge of 100,000 (now ~10 s).
 */
const CANCEL_PICKED_SQL = `${cancelCandidatesCtes(
  `SELECT t.id, t.status AS from_status, t.lease_token AS old_token
      FROM (SELECT DISTINCT p.id FROM unnest($1::text[]) AS p(id) ORDER BY p.id) p
      CROSS JOIN LATERAL ${lockById("p.id", ["id", "status", "lease_token"])} t
      WHERE t.status IN ${WAITING}`,
  "$2",
  "'queue purged'",
)},
  ${releaseNextInOrder("upd", "$3::float8", "upd")}
  SELECT upd.id, upd.workflow_id, released_rows.released FROM upd ${RELEASED_JOIN}`;

/**
 * $1 tenant, $2 queue, $3 actor, $4 workflows (locked by the caller), $5 purge start.
 * Every BLOCKED task of the queue in those workflows. No ordering key to
 * release: a workflow's tasks have none.
 */
const PURGE_BLOCKED_SQL = `${cancelCtes(
  `t.workflow_id = ANY($4::text[]) AND t.tenant_id = $1 AND t.queue_id = $2 AND t.status = 'BLOCKED' AND t.created_at <= $5`,
  "$3",
  "'queue purged'",
  "ORDER BY t.id",
)}
  SELECT upd.id, upd.workflow_id FROM upd`;

/**
 * The workflows of up to $4 BLOCKED tasks of the queue, read unlocked: the
 * queue's workflow tasks (tasks_queue_workflow_idx) or the tenant's BLOCKED
 * ones (tasks_tenant_id_status_id_idx), whichever holds fewer. Every BLOCKED
 * task is a workflow's; saying so (workflow_id IS NOT NULL) is what lets the
 * planner take the queue's index: without it, a purge of a queue with no
 * workflow tasks read all the tenant's BLOCKED tasks, or the whole table
 * (200,000 BLOCKED elsewhere: a parallel seq scan, 97 ms; now 0.2 ms).
 */
const BLOCKED_WORKFLOWS_SQL = `SELECT DISTINCT b.workflow_id FROM (
    SELECT t.workflow_id FROM tasks t
    WHERE t.tenant_id = $1 AND t.status = 'BLOCKED' AND t.queue_id = $2 AND t.workflow_id IS NOT NULL AND t.created_at <= $3
    ORDER BY t.id DESC LIMIT $4) b`;

type CancelledRow = { id: string; workflow_id: string | null };

const asWorkflowRows = (rows: CancelledRow[]) => rows.map((r) => ({ id: r.id, workflowId: r.workflow_id }));

/** Cancels the queue's waiting and BLOCKED tasks (see the file's comment), a batch per transaction. */
export async function purgeQueue(db: Database, tenantId: string, queueId: string, options: PurgeOptions): Promise<PurgeResult> {
  const batch = options.batch ?? PURGE_BATCH;
  const started = (await db.pool.query<{ now: Date }>("SELECT now() AS now")).rows[0]?.now as Date;
  const result: PurgeResult = { cancelled: 0, blocked: 0, finishedWorkflows: 0 };
  const done = async (b: PurgeBatch) => {
    result.cancelled += b.cancelled;
    result.finishedWorkflows += b.workflows.finished.length;
    await options.onBatch?.(b);
  };
  const purgeWaiting = async () => {
    for (;;) {
      const { picked, ...b } = await withTransaction(db.pool, (client) => purgeWaitingBatch(client, queueId, options, batch, started));
      await done(b);
      // Every task picked leaves the waiting lanes (cancelled here, or started meanwhile), so a short pick is the end.
      if (picked < batch) return;
    }
  };
  await purgeWaiting();
  for (;;) {
    const { found, ...b } = await withTransaction(db.pool, (client) => purgeBlockedBatch(client, tenantId, queueId, options, batch, started));
    result.blocked += b.cancelled;
    await done(b);
    // Each round takes every BLOCKED task of the workflows it found (or sees them released), so one that found none ends the walk.
    if (found === 0) break;
  }
  // BLOCKED tasks whose parents elsewhere succeeded while the purge ran are waiting now.
  if (result.blocked > 0) await purgeWaiting();
  return result;
}

async function purgeWaitingBatch(
  client: pg.PoolClient,
  queueId: string,
  o: PurgeOptions,
  batch: number,
  started: Date,
): Promise<PurgeBatch & { picked: number }> {
  const picked = (await client.query<{ id: string }>(PICK_WAITING_SQL, [queueId, started, batch])).rows.map((r) => r.id);
  if (picked.length === 0) return { picked: 0, cancelled: 0, dispatch: [], workflows: noProgress() };
  const res = await client.query(CANCEL_PICKED_SQL, [picked, o.actor, o.horizonMs]);
  const rows = res.rows as (CancelledRow & { released: unknown })[];
  // A cancelled workflow task's dependants are SKIPPED (lock order: these rows, then their workflows, then BLOCKED ones).
  const workflows = await advanceWorkflows(client, asWorkflowRows(rows), o.actor, o.horizonMs);
  return { picked: picked.length, cancelled: rows.length, dispatch: [...mapReleased(res.rows), ...workflows.dispatch], workflows };
}

async function purgeBlockedBatch(
  client: pg.PoolClient,
  tenantId: string,
  queueId: string,
  o: PurgeOptions,
  batch: number,
  started: Date,
): Promise<PurgeBatch & { found: number }> {
  // Bounded by tasks, not workflows: a batch's workflows hold at most `batch` of the queue's BLOCKED tasks found here,
  // and a workflow holds at most MAX_WORKFLOW_TASKS.
  const found = await client.query<{ workflow_id: string }>(BLOCKED_WORKFLOWS_SQL, [tenantId, queueId, started, batch]);
  const workflowIds = found.rows.map((r) => r.workflow_id);
  if (workflowIds.length === 0) return { found: 0, cancelled: 0, dispatch: [], workflows: noProgress() };
  // A BLOCKED task is written only under its workflow's lock (workflow-progress.ts), taken first.
  await lockWorkflows(client, workflowIds);
  const res = await client.query<CancelledRow>(PURGE_BLOCKED_SQL, [tenantId, queueId, o.actor, workflowIds, started]);
  const workflows = await advanceWorkflows(client, asWorkflowRows(res.rows), o.actor, o.horizonMs);
  return { found: workflowIds.length, cancelled: res.rows.length, dispatch: workflows.dispatch, workflows };
}
