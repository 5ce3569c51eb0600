import { takeTasksEnteringHorizon } from "@tasklane/db";
import { connectionLost } from "@tasklane/queue";
import type { SchedulerContext } from "../context.js";

const BATCH = 1000;

/**
 * Far-future tasks live only in Postgres; as they come within the horizon
 * they go to BullMQ's delayed set, which starts them on time to the millisecond.
 */
export async function promoteIntoHorizon(ctx: SchedulerContext): Promise<boolean> {
  // Not while Redis is lost: the hand-over commits before the enqueue, so each pass would mark up to
  // BATCH tasks handed over only to fail their dispatch, and they would wait for the reconciler's sweep
  // (up to RECONCILE_INTERVAL_SECONDS after Redis is back). Left as they are, the next pass takes them.
  if (connectionLost(ctx.redis)) return false;
  const intents = await takeTasksEnteringHorizon(ctx.db, ctx.horizonMs, BATCH);
  if (intents.length) {
    await ctx.dispatcher.dispatch(intents);
    ctx.log.debug({ n: intents.length }, "tasks promoted into the dispatch horizon");
  }
  return intents.length === BATCH;
}
