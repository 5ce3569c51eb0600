import { fireDueSchedules } from "@tasklane/db";
import { newTaskTrace, withTaskSpans } from "@tasklane/observability";
import { dispatchAfterCommit, publishCancellations } from "@tasklane/queue";
import type { SchedulerContext } from "../context.js";

const BATCH = 100;
/** See FireOptions.lookaheadMs: ALLOW runs are materialised this early and started by BullMQ's delayed set. */
const LOOKAHEAD_MS = 2_000;

/** Materialises due cron occurrences (exactly once, whatever the number of schedulers). */
export async function fireSchedules(ctx: SchedulerContext): Promise<boolean> {
  const result = await fireDueSchedules(ctx.db, {
    lookaheadMs: LOOKAHEAD_MS,
    horizonMs: ctx.horizonMs,
    limit: BATCH,
    graceMs: ctx.env.SCHEDULE_MISFIRE_GRACE_SECONDS * 1000,
    // Each cron run is its own trace, rooted where it is materialised.
    newTraceParent: () => newTaskTrace("task.scheduled", null, {}),
  });
  ctx.metrics.schedulesFired.inc(result.fired);
  if (result.schedules > 0) ctx.log.debug({ fired: result.fired, skipped: result.skipped }, "schedules fired");
  await withTaskSpans("task.dispatch", result.dispatch, () =>
    dispatchAfterCommit(ctx.db, ctx.dispatcher, result.dispatch, (error) => ctx.log.warn({ err: error }, "fast dispatch failed; outbox will retry")),
  );
  await publishCancellations(ctx.redis, ctx.keys, result.cancelledRunning);
  return result.schedules === BATCH;
}
