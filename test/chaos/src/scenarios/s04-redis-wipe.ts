import { createEverySecondSchedules, disableSchedules, itemOfTask, recordOccurrences } from "../lib/schedules.js";
import { drain, recordFinalState, submitItems, type ItemSpec } from "../lib/workload.js";
import { sleep } from "../lib/wait.js";
import { range, withPushPlatform } from "./platform.js";
import type { Scenario } from "./scenario.js";

/**
 * Redis holds only what Postgres can rebuild. Under load (tasks due now,
 * tasks in Redis's delayed set, tasks beyond the horizon still in Postgres,
 * and cron schedules firing every second) the suite's own redis-server gets
 * a FLUSHALL, and later a restart with nothing kept.
 */
export const redisWipe: Scenario = {
  id: 4,
  title: "Redis FLUSHALL and Redis restart under load",
  fault: "FLUSHALL on the suite's own redis-server, later SIGKILL + restart of it (empty), while tasks run and schedules fire",
  async run(ctx) {
    const size = ctx.quick ? { tasks: 200, schedules: 2, phaseMs: 2_000, downMs: 1_000 } : { tasks: 6_000, schedules: 5, phaseMs: 8_000, downMs: 3_000 };
    const env = { DISPATCH_HORIZON_SECONDS: "3" };
    return withPushPlatform(ctx, { label: "s4", workers: 2, workerConcurrency: 10, endpointDelayMs: 20, env }, async ({ cluster, tenant }) => {
      const schedules = await createEverySecondSchedules(cluster, tenant, size.schedules, "push");
      // A third due now, a third in the delayed set (within 3 s), a third beyond the horizon (Postgres only).
      const specs: ItemSpec[] = range(size.tasks).map((i) => ({ item: `s4-${i}`, queue: "push", ...(i % 3 === 0 ? {} : { delaySeconds: i % 3 === 1 ? 1 + (i % 2) : 4 + ((i % 7) * size.phaseMs) / 3_500 }) }));
      const submitting = submitItems(cluster, tenant, specs, 200, 1);
      await sleep(size.phaseMs / 2);
      ctx.log("FLUSHALL");
      cluster.history.record({ kind: "fault", fault: "flushall", target: "redis" });
      await cluster.redis.flushAll();
      cluster.history.record({ kind: "restored", target: "redis" });
      await sleep(size.phaseMs);
      ctx.log(`redis restart (down ${size.downMs} ms)`);
      cluster.history.record({ kind: "fault", fault: "restart", target: "redis" });
      await cluster.redis.restart(size.downMs);
      cluster.history.record({ kind: "restored", target: "redis" });
      await submitting;
      await sleep(size.phaseMs);
      const endAt = await disableSchedules(cluster, tenant, schedules);
      const drained = await drain(cluster.database.db, ctx.quick ? 60_000 : 240_000, (left) => ctx.log(`${left} tasks unfinished`));
      const occurrences = await recordOccurrences(cluster, schedules, endAt);
      await recordFinalState(cluster, itemOfTask);
      const alive = cluster.apps.filter((a) => a.alive()).length === cluster.apps.length;
      return {
        faults: 2,
        notes: [`${size.tasks} tasks (due now / in the delayed set / beyond a 3 s horizon) and ${size.schedules} every-second schedules (${occurrences} occurrences checked)`],
        claims: [
          { claim: "drained before the deadline", holds: drained },
          { claim: "every platform process survived without a restart", holds: alive },
        ],
      };
    });
  },
};
