/**
 * What a workflow task's terminal transition does to the rest of its
 * workflow: release children whose parents have all succeeded, skip what lies
 * downstream of a task that did not, and finish the workflow when nothing is
 * left to run.
 *
 * Why a second statement (in the transition's own transaction) and not more
 * CTEs in the first: "have all parents succeeded?" reads rows other
 * transactions write. Two parents finishing at the same moment in two
 * transactions would each see the other still RUNNING in their statement
 * snapshot and neither would release the child. So the transition first
 * takes the row lock of each affected workflow, and only then runs this
 * statement, whose fresh snapshot includes every earlier holder's commit:
 * whichever of the two commits second sees both parents SUCCEEDED.
 *
 * Lock order, kept by every writer so none of this can deadlock:
 *   1. task rows that are not BLOCKED (a transition's own rows),
 *   2. workflow rows, in id order,
 *   3. BLOCKED task rows of those workflows.
 * A BLOCKED task is only ever written by a holder of its workflow's lock, so
 * its state cannot change under that holder.
 */
import type pg from "pg";
import type { WorkflowStatus } from "@tasklane/core";
import { dispatchOutboxCtes, mapDispatchRow, type DispatchIntent } from "../outbox/dispatch-intent.js";
import { enqueuedGenerationExpr, eventInsert, notifyOutboxInsert, sameId } from "./sql-fragments.js";

/**
 * Statuses a workflow waits on; keep in step with the partial indexes over unfinished tasks that the
 * looks naming them read: tasks_workflow_unfinished_idx, tasks_ordering_unfinished_idx (start-attempts.ts)
 * and tasks_schedule_unfinished_idx (schedules' overlap looks, which spell the list out; overlap-history.test.ts).
 */
export const UNFINISHED_TASK_STATUSES = "('SCHEDULED', 'BLOCKED', 'QUEUED', 'RUNNING', 'RETRYING')";

/** How many of a workflow's unfinished tasks ADVANCE_SQL looks up among a child's parents before walking them all. */
const UNFINISHED_PEEK = 4;

export interface FinishedWorkflow {
  id: string;
  tenantId: string;
  status: WorkflowStatus;
  completedAt: Date;
}

export interface WorkflowProgress {
  /** Children released to QUEUED: dispatch intents for the PUSH ones (after commit). */
  dispatch: DispatchIntent[];
  /** Queues of every released child (PULL long-polls can be woken). */
  releasedQueueIds: string[];
  skipped: number;
  finished: FinishedWorkflow[];
}

/** A fresh empty result (never shared: callers may extend its arrays). */
export const noProgress = (): WorkflowProgress => ({ dispatch: [], releasedQueueIds: [], skipped: 0, finished: [] });

/** Row locks on the given workflows, in id order (lock order step 2). Returns each one's status. */
export async function lockWorkflows(client: pg.PoolClient, workflowIds: readonly string[]): Promise<Map<string, WorkflowStatus>> {
  const ids = [...new Set(workflowIds)].sort();
  if (ids.length === 0) return new Map();
  const res = await client.query<{ id: string; status: WorkflowStatus }>(
    "SELECT id, status FROM workflows WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE",
    [ids],
  );
  return new Map(res.rows.map((r) => [r.id, r.status]));
}

/**
 * NOTIFY outbox row per finished workflow (webhook event workflow.completed),
 * only when the tenant has a webhook: workflows have no callbackUrl.
 */
export function workflowNotifyInsert(source: string): string {
  return `INSERT INTO outbox (kind, tenant_id, task_id, payload)
    SELECT 'NOTIFY', f.tenant_id, NULL, jsonb_build_object('event', 'workflow.completed', 'workflowId', f.id, 'status', f.status)
    FROM ${source} f
    WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.tenant_id = f.tenant_id AND w.enabled AND w.deleted_at IS NULL)`;
}

/**
 * $1 task ids that just became terminal, $2 actor, $3 dispatch horizon (ms),
 * $4 their workflow ids (locked by the caller).
 *
 * The snapshot already holds this transaction's own terminal rows, so `src`
 * reads their new status. Inside the statement, rows written by `sk`/`rel`
 * still read as BLOCKED; `fin` accounts for them explicitly.
 */
const ADVANCE_SQL = `WITH RECURSIVE src AS (
    SELECT t.workflow_id, t.workflow_key, t.status FROM tasks t
    WHERE t.id = ANY($1::text[]) AND t.workflow_id IS NOT NULL
  ),
  -- Everything transitively downstream of a task that ended without success.
  down (workflow_id, key) AS (
    SELECT e.workflow_id, e.child_key FROM src s
    JOIN workflow_edges e ON e.workflow_id = s.workflow_id AND e.parent_key = s.workflow_key
    WHERE s.status IN ('DEAD', 'CANCELLED', 'SKIPPED')
    UNION
    SELECT e.workflow_id, e.child_key FROM down d
    JOIN workflow_edges e ON e.workflow_id = d.workflow_id AND e.parent_key = d.key
  ),
  sk AS (
    UPDATE tasks t SET status = 'SKIPPED', completed_at = now(), updated_at = now()
    FROM down d WHERE t.workflow_id = d.workflow_id AND t.workflow_key = d.key AND t.status = 'BLOCKED'
    RETURNING t.*, 'BLOCKED'::"TaskStatus" AS from_status
  ),
  skev AS (${eventInsert("sk", "$2", "'an upstream workflow task did not succeed'")}),
  sknt AS (${notifyOutboxInsert("sk")}),
  -- BLOCKED children of a success, each once however many of its parents this statement finished
  -- (MATERIALIZED: the checks below ran once per finished parent when pushed under the DISTINCT,
  -- a completeTasks of 100 parents of one join walked its parents 100 times). Each child is found
  -- by its (workflow_id, workflow_key) key: with the status test beside it the planner walked the
  -- workflow's unfinished tasks instead, ~1,000 per completion mid-way through a 2,000-task
  -- fan-in; OFFSET 0 keeps that test out of the lookup.
  cand AS MATERIALIZED (
    SELECT DISTINCT c.id, c.workflow_id, c.workflow_key FROM src s
    JOIN workflow_edges e ON e.workflow_id = s.workflow_id AND e.parent_key = s.workflow_key
    CROSS JOIN LATERAL (SELECT c.id, c.workflow_id, c.workflow_key, c.status FROM tasks c
                        WHERE c.workflow_id = e.workflow_id AND c.workflow_key = e.child_key OFFSET 0) c
    WHERE s.status = 'SUCCEEDED' AND c.status = 'BLOCKED'
  ),
  -- Those whose parents have all succeeded (decided under the workflow lock). The walk over a
  -- child's parents goes in the order they were listed, which is mostly the order they were
  -- submitted and so finish: each completion of a 2,000-parent fan-in walked past ~1,000 that
  -- had succeeded before meeting one that had not (quadratic: 16.9 s for that workflow on PUSH,
  -- 4.9 s for a 2,000-task fan-out). So a few of the workflow's unfinished tasks (its partial
  -- index) are first looked up among the child's parents: in a fan-in the first one is, and the
  -- walk is skipped. That look only ever refuses; "all succeeded" comes from the whole walk.
  -- (No counter of parents left: code without it, during a rolling upgrade, would not count down.)
  ready AS (
    SELECT c.id FROM cand c
    WHERE CASE WHEN EXISTS (
        SELECT 1 FROM (SELECT u.workflow_key FROM tasks u
                       WHERE u.workflow_id = c.workflow_id AND u.status IN ${UNFINISHED_TASK_STATUSES} LIMIT ${UNFINISHED_PEEK}) u
        -- Per peeked task, a probe of the edges' primary key by (workflow_id, parent_key): a scalar
        -- subquery is planned for one task at a time (an EXISTS became a join that read all the
        -- workflow's edges), and IS NOT DISTINCT FROM keeps child_key out of its index conditions
        -- (with it, the planner chose to walk the child's edges by (workflow_id, child_key)).
        WHERE (SELECT true FROM workflow_edges pe
               WHERE pe.workflow_id = c.workflow_id AND pe.parent_key = u.workflow_key
                 AND pe.child_key IS NOT DISTINCT FROM c.workflow_key LIMIT 1))
      THEN false
      ELSE NOT EXISTS (
        SELECT 1 FROM workflow_edges pe
        JOIN tasks p ON p.workflow_id = pe.workflow_id AND p.workflow_key = pe.parent_key
        WHERE pe.workflow_id = c.workflow_id AND pe.child_key = c.workflow_key AND p.status <> 'SUCCEEDED')
      END
      AND NOT EXISTS (SELECT 1 FROM down d WHERE d.workflow_id = c.workflow_id AND d.key = c.workflow_key)
      AND EXISTS (SELECT 1 FROM workflows w WHERE w.id = c.workflow_id AND w.status = 'RUNNING')
  ),
  -- Its wait for parents does not count as queueing time (aging), hence run_at = now().
  rel AS (
    UPDATE tasks t SET status = 'QUEUED', run_at = now(), updated_at = now(),
      dispatch_generation = t.dispatch_generation + 1,
      enqueued_generation = ${enqueuedGenerationExpr("t.dispatch_generation + 1", "now()", "$3::float8")}
    FROM ready WHERE ${sameId("t", "ready")} AND t.status = 'BLOCKED'
    RETURNING t.*, 'BLOCKED'::"TaskStatus" AS from_status
  ),
  relev AS (${eventInsert("rel", "$2", "'workflow dependencies succeeded'")}),
  ${dispatchOutboxCtes("relob", "rel", "$3::float8")},
  fin AS (
    -- now() is this transaction's start; a task finished by a transaction that
    -- committed meanwhile may carry a later time, and the workflow never ends before its last task.
    UPDATE workflows w SET completed_at = GREATEST(now(), (SELECT max(t.completed_at) FROM tasks t WHERE t.workflow_id = w.id)),
      -- A failure outranks a cancellation: FAILED is what alerts, and a task did fail.
      -- A task the user cancelled (cancelTask) is not a failure: CANCELLED, as cancelWorkflow.
      -- A DEAD task discarded since (DEAD -> CANCELLED) still died: without its event, discarding
      -- it before the other branches finished turned the workflow's FAILED into CANCELLED.
      status = (CASE WHEN EXISTS (SELECT 1 FROM tasks t WHERE t.workflow_id = w.id AND (t.status = 'DEAD'
                       OR (t.status = 'CANCELLED' AND EXISTS (SELECT 1 FROM task_events ev WHERE ev.task_id = t.id AND ev.to_status = 'DEAD'))))
                     THEN 'FAILED'
                     WHEN EXISTS (SELECT 1 FROM tasks t WHERE t.workflow_id = w.id AND t.status = 'CANCELLED') THEN 'CANCELLED'
                     WHEN EXISTS (SELECT 1 FROM sk WHERE sk.workflow_id = w.id)
                       OR EXISTS (SELECT 1 FROM tasks t WHERE t.workflow_id = w.id AND t.status <> 'SUCCEEDED')
                     THEN 'FAILED' ELSE 'SUCCEEDED' END)::"WorkflowStatus"
    WHERE w.id = ANY($4::text[]) AND w.status = 'RUNNING'
      AND NOT EXISTS (SELECT 1 FROM rel WHERE rel.workflow_id = w.id)
      AND NOT EXISTS (
        SELECT 1 FROM tasks t WHERE t.workflow_id = w.id AND t.status IN ${UNFINISHED_TASK_STATUSES}
          AND NOT EXISTS (SELECT 1 FROM sk WHERE sk.id = t.id))
    RETURNING w.id, w.tenant_id, w.status, w.completed_at
  ),
  finnt AS (${workflowNotifyInsert("fin")})
  SELECT
    (SELECT COALESCE(json_agg(json_build_object('task_id', rel.id, 'tenant_id', rel.tenant_id, 'queue_id', rel.queue_id,
       'priority', rel.priority, 'run_at', rel.run_at, 'dispatch_generation', rel.dispatch_generation,
       'outbox_id', relob.outbox_id)), '[]'::json)
     FROM rel LEFT JOIN relob ON relob.task_id = rel.id) AS released,
    (SELECT count(*)::int FROM sk) AS skipped,
    (SELECT COALESCE(json_agg(fin), '[]'::json) FROM fin) AS finished`;

/**
 * The follow-up of terminal transitions: `rows` reached a terminal status in
 * the caller's (still open) transaction. Locks their workflows, then in one
 * statement skips, releases and finishes. A task without a workflow is ignored.
 */
export async function advanceWorkflows(
  client: pg.PoolClient,
  rows: readonly { id: string; workflowId: string | null }[],
  actor: string,
  horizonMs: number,
): Promise<WorkflowProgress> {
  const inWorkflow = rows.filter((r) => r.workflowId !== null);
  if (inWorkflow.length === 0) return noProgress();
  const workflowIds = [...new Set(inWorkflow.map((r) => r.workflowId as string))];
  await lockWorkflows(client, workflowIds);
  const res = await client.query(ADVANCE_SQL, [inWorkflow.map((r) => r.id), actor, horizonMs, workflowIds]);
  const row = res.rows[0] as { released: Record<string, unknown>[]; skipped: number; finished: Record<string, unknown>[] };
  return {
    dispatch: row.released.filter((r) => r.outbox_id != null).map(mapDispatchRow),
    releasedQueueIds: [...new Set(row.released.map((r) => r.queue_id as string))],
    skipped: row.skipped,
    finished: row.finished.map((f) => ({
      id: f.id as string,
      tenantId: f.tenant_id as string,
      status: f.status as WorkflowStatus,
      completedAt: new Date(f.completed_at as string),
    })),
  };
}
