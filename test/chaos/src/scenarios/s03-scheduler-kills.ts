import { drain, recordFinalState, submitItems } from "../lib/workload.js";
import { sleep } from "../lib/wait.js";
import { range, withPushPlatform } from "./platform.js";
import type { Scenario } from "./scenario.js";

/**
 * Every task is submitted beyond a 1 s dispatch horizon, so only the
 * scheduler moves it into Redis: one transaction commits the outbox rows,
 * then the enqueue follows. The scheduler is SIGKILLed again and again while
 * it does that; whatever a killed scheduler committed but did not enqueue
 * stays in the outbox for the next one.
 */
export const schedulerKills: Scenario = {
  id: 3,
  title: "Scheduler/dispatcher SIGKILLed between commit and enqueue, many times",
  fault: "SIGKILL of the only scheduler every 0.4–1 s while it promotes delayed tasks into Redis (commit the hand-over, then enqueue); restarted after each kill",
  async run(ctx) {
    const size = ctx.quick ? { tasks: 150, spreadS: 4, kills: 3 } : { tasks: 5_000, spreadS: 40, kills: 40 };
    const env = { DISPATCH_HORIZON_SECONDS: "1" };
    return withPushPlatform(ctx, { label: "s3", workers: 1, workerConcurrency: 20, env }, async ({ cluster, tenant }) => {
      // Spread over the window, all beyond the horizon: the scheduler's promotion is the only way in.
      const specs = range(size.tasks).map((i) => ({ item: `s3-${i}`, queue: "push", delaySeconds: 2 + (size.spreadS * i) / size.tasks }));
      await submitItems(cluster, tenant, specs, 500);
      const leftBehind: number[] = [];
      for (let k = 0; k < size.kills; k++) {
        await sleep(400 + Math.random() * 600);
        const victim = cluster.running("scheduler")[0];
        if (victim) {
          cluster.kill(victim);
          await victim.exited;
          // What the killed scheduler committed but had not enqueued (or not yet deleted): the outbox's job now.
          const pending = await cluster.database.db.pool.query<{ n: number }>(`SELECT coalesce(sum(coalesce(cardinality(task_ids), 1)), 0)::int AS n FROM outbox WHERE kind = 'DISPATCH_TASK'`);
          leftBehind.push(pending.rows[0]!.n);
        }
        // Not awaited: the next kill may well land while the replacement is still starting.
        void cluster.start("scheduler").catch(() => undefined);
      }
      ctx.log(`tasks in the outbox right after each kill: ${leftBehind.join(", ")}`);
      const drained = await drain(cluster.database.db, ctx.quick ? 60_000 : 240_000, (left) => ctx.log(`${left} tasks unfinished`));
      await recordFinalState(cluster);
      const hits = leftBehind.filter((n) => n > 0).length;
      return {
        faults: size.kills,
        notes: [`${size.tasks} tasks due over ${size.spreadS} s beyond a 1 s horizon; ${hits} of ${size.kills} kills left committed outbox entries behind (max ${Math.max(0, ...leftBehind)})`],
        claims: [{ claim: "drained before the deadline", holds: drained }],
      };
    });
  },
};
