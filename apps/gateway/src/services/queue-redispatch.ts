/**
 * Puts a PUSH queue's waiting tasks back in Redis when a queue starts to run
 * (resumed, or switched from PULL to PUSH). Jobs may be missing: a worker
 * whose queue directory was up to a second behind a pause took jobs whose
 * start the paused queue then refused, and a PULL queue's tasks never had
 * jobs. The reconciler would re-add them, but only on its sweep (seconds
 * later), and work submitted meanwhile started first whatever its priority.
 *
 * Only jobs missing from Redis are added (MissingJobFinder, the reconciler's
 * check): after a pause almost all of them still exist, and each add rings
 * every worker's doorbell. The request checks the highest-priority first
 * pages only, so it stays bounded however deep the backlog (1M waiting tasks
 * were ~500 reads and dispatches inside one mutation, past the client's
 * timeout, and its retry, the queue no longer paused, did nothing); the rest
 * is walked after the answer, in the background, and what that leaves (a
 * cap, a failure, a restart) goes to the reconciler's sweep.
 */
import type { Database, DispatchIntent } from "@tasklane/db";
import { mapDispatchRow } from "@tasklane/db";
import type { MissingJobFinder, TaskDispatcher } from "@tasklane/queue";

export interface RedispatchDeps {
  db: Database;
  dispatcher: TaskDispatcher;
  finder: MissingJobFinder;
  horizonMs: number;
  /** Tasks read and checked at a time. @defaultValue 2000 */
  pageSize?: number;
  /** Pages checked before the caller is answered. @defaultValue 1 */
  pagesInRequest?: number;
  /** Pages the background walk checks before leaving the rest to the reconciler. @defaultValue 100 (200,000 tasks) */
  backgroundPages?: number;
}

type Cursor = { priority: string; runAt: Date; id: string };

export interface Redispatched {
  /** Jobs re-added before the answer. */
  added: number;
  /** The walk of the rest of the backlog; null when the first pages held it all. */
  rest: Promise<{ added: number; checked: number; complete: boolean }> | null;
}

/**
 * Walks the queue's waiting tasks on tasks_runnable_lane_idx (queue, lane,
 * run_at, id), highest lane first, so the work that should start first is back
 * first. Only tasks already handed over (enqueued_generation =
 * dispatch_generation) and due within the horizon. Tasks not yet handed over
 * reach Redis by the outbox or horizon promotion, as do those of a queue
 * switched from PULL to PUSH that are due beyond the horizon: the switch hands
 * them back to promotion (queue-service.ts, HAND_FAR_TASKS_TO_PROMOTION).
 */
export async function redispatchQueue(deps: RedispatchDeps, tenantId: string, queueId: string): Promise<Redispatched> {
  const pageSize = deps.pageSize ?? 2000;
  const first = await walk(deps, tenantId, queueId, null, deps.pagesInRequest ?? 1, pageSize);
  if (first.after === null) return { added: first.added, rest: null };
  const after = first.after;
  const rest = walk(deps, tenantId, queueId, after, deps.backgroundPages ?? 100, pageSize).then((r) => ({
    added: r.added,
    checked: r.checked,
    complete: r.after === null,
  }));
  return { added: first.added, rest };
}

async function walk(
  deps: RedispatchDeps,
  tenantId: string,
  queueId: string,
  start: Cursor | null,
  pages: number,
  pageSize: number,
): Promise<{ added: number; checked: number; after: Cursor | null }> {
  let after = start;
  let added = 0;
  let checked = 0;
  for (let page = 0; page < pages; page++) {
    const res: { rows: Record<string, unknown>[] } = await deps.db.pool.query(
      `SELECT t.id AS task_id, t.tenant_id, t.queue_id, t.priority, t.run_at, t.dispatch_generation, t.trace_parent
       FROM tasks t
       WHERE t.tenant_id = $1 AND t.queue_id = $2 AND t.status IN ('QUEUED', 'SCHEDULED', 'RETRYING')
         AND t.run_at <= now() + $3 * interval '1 millisecond' AND t.enqueued_generation = t.dispatch_generation
         ${after === null ? "" : "AND (t.priority, t.run_at, t.id) > ($5::\"Priority\", $6, $7)"}
       ORDER BY t.priority, t.run_at, t.id LIMIT $4`,
      after === null ? [tenantId, queueId, deps.horizonMs, pageSize] : [tenantId, queueId, deps.horizonMs, pageSize, after.priority, after.runAt, after.id],
    );
    const rows = res.rows;
    const intents: DispatchIntent[] = rows.map(mapDispatchRow);
    const missing = await deps.finder.goneOf(intents);
    if (missing.length > 0) await deps.dispatcher.dispatch(missing);
    added += missing.length;
    checked += intents.length;
    const last = rows[rows.length - 1];
    if (rows.length < pageSize || last === undefined) return { added, checked, after: null };
    after = { priority: last.priority as string, runAt: last.run_at as Date, id: last.task_id as string };
  }
  return { added, checked, after };
}
