import type { Database } from "../database.js";

/** Rows removed by one pruning statement, by table. */
export interface PrunedRows {
  tasks: number;
  attempts: number;
  events: number;
  workflows: number;
  deliveries: number;
}

/** Most task rows one statement deletes (their attempts and events go with them), so no statement holds locks for long. */
export const PRUNE_BATCH = 1000;

/** The retention's cutoff on Postgres's clock (the platform's one clock); $1 is the retention in days. */
const CUTOFF = "(now() - $1::float8 * interval '1 day')";

/**
 * Finished tasks older than the retention, with their attempts and audit
 * events. Old means both completed and due before the cutoff: the walk is on
 * the finished tasks' (run_at) index (migration status_run_at_partial), one
 * entry per finished task (a task cancelled while far in the future is
 * pruned once its run time is past the cutoff too). Tasks of a workflow still
 * RUNNING stay: their results feed children. SKIP LOCKED: a task some
 * transition holds is left for the next batch.
 */
const PRUNE_TASKS_SQL = `WITH doomed AS (
    SELECT t.id FROM tasks t
    WHERE t.status IN ('SUCCEEDED', 'DEAD', 'CANCELLED', 'SKIPPED')
      AND t.run_at < ${CUTOFF} AND t.completed_at < ${CUTOFF}
      AND (t.workflow_id IS NULL OR NOT EXISTS (
        SELECT 1 FROM workflows w WHERE w.id = t.workflow_id AND w.status = 'RUNNING'))
    LIMIT $2 FOR UPDATE OF t SKIP LOCKED
  ),
  ev AS (DELETE FROM task_events e USING doomed d WHERE e.task_id = d.id RETURNING 1),
  att AS (DELETE FROM task_attempts a USING doomed d WHERE a.task_id = d.id RETURNING 1),
  del AS (DELETE FROM tasks t USING doomed d WHERE t.id = d.id RETURNING 1)
  SELECT (SELECT count(*) FROM del)::int AS tasks, (SELECT count(*) FROM att)::int AS attempts,
         (SELECT count(*) FROM ev)::int AS events`;

/** Finished workflows past the cutoff whose tasks are all gone (edges cascade). */
const PRUNE_WORKFLOWS_SQL = `DELETE FROM workflows w WHERE w.id IN (
    SELECT w2.id FROM workflows w2
    WHERE w2.status <> 'RUNNING' AND w2.completed_at < ${CUTOFF}
      AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.workflow_id = w2.id)
    LIMIT $2 FOR UPDATE SKIP LOCKED)`;

/** Delivery log rows that are settled (DELIVERED or FAILED) and past the cutoff. */
const PRUNE_DELIVERIES_SQL = `DELETE FROM webhook_deliveries d WHERE d.id IN (
    SELECT id FROM webhook_deliveries
    WHERE status IN ('DELIVERED', 'FAILED') AND next_attempt_at < ${CUTOFF}
    LIMIT $2 FOR UPDATE SKIP LOCKED)`;

/**
 * One bounded pass of the retention job: at most `batch` tasks (plus their
 * attempts and events), `batch` workflows and `batch` deliveries, each in its
 * own autocommit statement. Callers repeat while `full` is true.
 */
export async function pruneFinished(db: Database, retentionDays: number, batch = PRUNE_BATCH): Promise<{ pruned: PrunedRows; full: boolean }> {
  const tasks = await db.pool.query<{ tasks: number; attempts: number; events: number }>(PRUNE_TASKS_SQL, [retentionDays, batch]);
  const workflows = await db.pool.query(PRUNE_WORKFLOWS_SQL, [retentionDays, batch]);
  const deliveries = await db.pool.query(PRUNE_DELIVERIES_SQL, [retentionDays, batch]);
  const counts = tasks.rows[0] ?? { tasks: 0, attempts: 0, events: 0 };
  const pruned: PrunedRows = {
    ...counts,
    workflows: workflows.rowCount ?? 0,
    deliveries: deliveries.rowCount ?? 0,
  };
  return { pruned, full: pruned.tasks === batch || pruned.workflows === batch || pruned.deliveries === batch };
}

/**
 * Daily submission counters of days before yesterday (UTC). Only today's are
 * read (dailyTaskQuota, Tenant.usage.submittedToday), and every gateway
 * session writes a row of its own per tenant and day (submit-quotas.ts), so
 * without this the table grew by tenants × sessions rows a day for good.
 * Yesterday's stay for a day past midnight, for a gateway still adding to it.
 */
const PRUNE_USAGE_SQL = `DELETE FROM tenant_daily_usage u WHERE (u.tenant_id, u.day, u.slot) IN (
    SELECT tenant_id, day, slot FROM tenant_daily_usage
    WHERE day < (now() AT TIME ZONE 'UTC')::date - 1
    LIMIT $1 FOR UPDATE SKIP LOCKED)`;

/** One bounded pass over old daily counters; callers repeat while `full` is true. */
export async function pruneDailyUsage(db: Database, batch = PRUNE_BATCH): Promise<{ pruned: number; full: boolean }> {
  const res = await db.pool.query(PRUNE_USAGE_SQL, [batch]);
  const pruned = res.rowCount ?? 0;
  return { pruned, full: pruned === batch };
}
