import { takeTasksEnteringHorizon } from "@tasklane/db";
import type { SchedulerContext } from "../context.js";

const BATCH = 1000;

/**
 * Far-future tasks live only in Postgres; as they come within the horizon
 * they go to BullMQ's delayed set, which starts them on time to the millisecond.
 */
export async function promoteIntoHorizon(ctx: SchedulerContext): Promise<boolean> {
  const intents = await takeTasksEnteringHorizon(ctx.db, ctx.horizonMs, BATCH);
  if (intents.length) {
    await ctx.dispatcher.dispatch(intents);
    ctx.log.debug({ n: intents.length }, "tasks promoted into the dispatch horizon");
  }
  return intents.length === BATCH;
}
