/**
 * Puts a PUSH queue's waiting tasks in Redis now, when a queue starts to run
 * (resumed, or switched from PULL to PUSH). Its jobs may be missing: a worker
 * whose queue directory was up to a second behind a pause took jobs whose
 * start the paused queue then refused, and a PULL queue's tasks never had
 * jobs. The reconciler would re-add them, but only on its sweep (seconds
 * later), and work submitted meanwhile started first whatever its priority.
 * Re-adding is harmless (add-jobs.lua leaves a job that exists as it is).
 */
import type { Database, DispatchIntent } from "@tasklane/db";
import { mapDispatchRow } from "@tasklane/db";
import type { TaskDispatcher } from "@tasklane/queue";

/** Tasks read and dispatched at a time. */
const PAGE = 2000;

/**
 * Walks the queue's waiting tasks on tasks_runnable_lane_idx (queue, lane,
 * run_at, id), highest lane first, so the work that should start first is back
 * first. Only tasks already handed over (enqueued_generation =
 * dispatch_generation) and due within the horizon: the others reach Redis by
 * the outbox or horizon promotion as usual.
 */
export async function redispatchQueue(db: Database, dispatcher: TaskDispatcher, queueId: string, horizonMs: number): Promise<number> {
  let after: { priority: string; runAt: Date; id: string } | null = null;
  let total = 0;
  for (;;) {
    const res: { rows: Record<string, unknown>[] } = await db.pool.query(
      `SELECT t.id AS task_id, t.tenant_id, t.queue_id, t.priority, t.run_at, t.dispatch_generation
       FROM tasks t
       WHERE t.queue_id = $1 AND t.status IN ('QUEUED', 'SCHEDULED', 'RETRYING')
         AND t.run_at <= now() + $2 * interval '1 millisecond' AND t.enqueued_generation = t.dispatch_generation
         ${after === null ? "" : "AND (t.priority, t.run_at, t.id) > ($4::\"Priority\", $5, $6)"}
       ORDER BY t.priority, t.run_at, t.id LIMIT $3`,
      after === null ? [queueId, horizonMs, PAGE] : [queueId, horizonMs, PAGE, after.priority, after.runAt, after.id],
    );
    const rows = res.rows;
    const intents: DispatchIntent[] = rows.map(mapDispatchRow);
    await dispatcher.dispatch(intents);
    total += intents.length;
    const last = rows[rows.length - 1];
    if (rows.length < PAGE || last === undefined) return total;
    after = { priority: last.priority as string, runAt: last.run_at as Date, id: last.task_id as string };
  }
}
