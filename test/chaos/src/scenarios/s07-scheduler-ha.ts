import { createEverySecondSchedules, disableSchedules, itemOfTask, recordOccurrences } from "../lib/schedules.js";
import { drain, recordFinalState } from "../lib/workload.js";
import { sleep } from "../lib/wait.js";
import { pick, withPushPlatform } from "./platform.js";
import type { Scenario } from "./scenario.js";

/**
 * Three schedulers fire every-second cron schedules; one of them is
 * SIGKILLed at a random moment (often mid-tick) again and again and replaced.
 * Every occurrence from the first run to the end must run exactly once.
 */
export const schedulerFailover: Scenario = {
  id: 7,
  title: "Three schedulers, one killed mid-tick repeatedly",
  fault: "SIGKILL of a random one of three schedulers every 1–2.5 s while every-second schedules fire; a new scheduler replaces it",
  async run(ctx) {
    const size = ctx.quick ? { schedules: 3, kills: 2 } : { schedules: 10, kills: 20 };
    return withPushPlatform(ctx, { label: "s7", workers: 1, workerConcurrency: 20, schedulers: 3 }, async ({ cluster, tenant }) => {
      const schedules = await createEverySecondSchedules(cluster, tenant, size.schedules, "push");
      await sleep(1_500);
      for (let k = 0; k < size.kills; k++) {
        await sleep(1_000 + Math.random() * 1_500);
        const victim = pick(cluster.running("scheduler"));
        cluster.kill(victim);
        await cluster.start("scheduler");
      }
      await sleep(1_500);
      const endAt = await disableSchedules(cluster, tenant, schedules);
      const drained = await drain(cluster.database.db, 60_000, (left) => ctx.log(`${left} runs unfinished`));
      const occurrences = await recordOccurrences(cluster, schedules, endAt);
      await recordFinalState(cluster, itemOfTask);
      ctx.log(`${occurrences} occurrences checked`);
      return {
        faults: size.kills,
        notes: [`${size.schedules} every-second schedules, 3 schedulers, ${occurrences} occurrences checked`],
        claims: [{ claim: "drained before the deadline", holds: drained }, { claim: "occurrences were checked", holds: occurrences > 0 }],
      };
    });
  },
};
