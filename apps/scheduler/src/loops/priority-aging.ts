import { PriorityAger } from "@tasklane/queue";
import type { SchedulerContext } from "../context.js";

/** PUSH lanes: tasks waiting longer than PRIORITY_AGING_SECONDS count one lane higher. (PULL leases age in SQL.) */
export function createPriorityAging(ctx: SchedulerContext) {
  const ager = new PriorityAger(ctx.redis, ctx.keys);
  return {
    async tick(): Promise<void> {
      const moved = await ager.ageAll(ctx.env.PRIORITY_AGING_SECONDS * 1000);
      if (moved > 0) ctx.log.debug({ moved }, "aged waiting jobs up one priority lane");
    },
    close: () => ager.close(),
  };
}
