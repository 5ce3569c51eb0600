import { drainDispatchOutbox } from "@tasklane/db";
import { withTaskSpans } from "@tasklane/observability";
import type { SchedulerContext } from "../context.js";

/** Rows per claim; a row lists the tasks one statement wrote (up to a whole submission batch). */
const BATCH_ROWS = 50;
/**
 * Writers enqueue their own rows right after commit; rows younger than this
 * are theirs to delete, so the dispatcher does not race every fast path. A
 * gateway saturated by 1,000-task batches took more than 0.5 s for some, and
 * the dispatcher then enqueued thousands a second time (harmless, not free).
 */
const FAST_PATH_GRACE_MS = 2000;

/**
 * Safety net of the transactional outbox: anything committed reaches Redis.
 * Not while Redis is unreachable: each pass would claim rows only to fail
 * every one of them (an ERROR span per task, 1,800 in 10 s for 200 waiting
 * tasks, and a logged failure a second); they wait in Postgres instead.
 */
export async function dispatchOutbox(ctx: SchedulerContext): Promise<boolean> {
  if (ctx.redis.status !== "ready") return false;
  const drained = await drainDispatchOutbox(ctx.db, BATCH_ROWS, FAST_PATH_GRACE_MS, (intents) =>
    withTaskSpans("task.dispatch", intents, () => ctx.dispatcher.dispatch(intents)),
  );
  ctx.metrics.outboxDispatched.inc(drained.tasks);
  if (drained.rows > 0) ctx.log.debug(drained, "outbox rows dispatched");
  return drained.rows === BATCH_ROWS;
}
