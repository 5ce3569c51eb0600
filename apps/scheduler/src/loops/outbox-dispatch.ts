import { drainDispatchOutbox } from "@tasklane/db";
import { withTaskSpans } from "@tasklane/observability";
import type { SchedulerContext } from "../context.js";

const BATCH = 500;
/**
 * Writers enqueue their own rows right after commit; rows younger than this
 * are theirs to delete, so the dispatcher does not race every fast path. A
 * gateway saturated by 1,000-task batches took more than 0.5 s for some, and
 * the dispatcher then enqueued thousands a second time (harmless, not free).
 */
const FAST_PATH_GRACE_MS = 2000;

/** Safety net of the transactional outbox: anything committed reaches Redis. */
export async function dispatchOutbox(ctx: SchedulerContext): Promise<boolean> {
  const n = await drainDispatchOutbox(ctx.db, BATCH, FAST_PATH_GRACE_MS, (intents) =>
    withTaskSpans("task.dispatch", intents, () => ctx.dispatcher.dispatch(intents)),
  );
  ctx.metrics.outboxDispatched.inc(n);
  if (n > 0) ctx.log.debug({ n }, "outbox rows dispatched");
  return n === BATCH;
}
