import { drain, recordFinalState, submitItems } from "../lib/workload.js";
import { sleep } from "../lib/wait.js";
import { pick, range, withPushPlatform } from "./platform.js";
import type { Scenario } from "./scenario.js";

/** PUSH workers SIGKILLed mid-load; each is replaced by a fresh process. Orphaned attempts run again after their lease. */
export const workerKills: Scenario = {
  id: 1,
  title: "Worker processes SIGKILLed repeatedly under load",
  fault: "SIGKILL of a random PUSH worker process at intervals while tasks are submitted and run; a new worker replaces each",
  async run(ctx) {
    const size = ctx.quick ? { tasks: 200, workers: 2, kills: 1, concurrency: 5, every: 700 } : { tasks: 10_000, workers: 4, kills: 5, concurrency: 20, every: 1_500 };
    return withPushPlatform(ctx, { label: "s1", workers: size.workers, workerConcurrency: size.concurrency, endpointDelayMs: 40 }, async ({ cluster, tenant }) => {
      const specs = range(size.tasks).map((i) => ({ item: `s1-${i}`, queue: "push", timeoutSeconds: 1 }));
      const submitting = submitItems(cluster, tenant, specs, 250);
      for (let k = 0; k < size.kills; k++) {
        await sleep(size.every);
        const victim = pick(cluster.running("worker"));
        ctx.log(`kill ${k + 1}/${size.kills}: SIGKILL ${victim.id}`);
        cluster.kill(victim);
        await cluster.start("worker", { WORKER_CONCURRENCY: String(size.concurrency) });
      }
      await submitting;
      const drained = await drain(cluster.database.db, ctx.quick ? 90_000 : 300_000, (left) => ctx.log(`${left} tasks unfinished`));
      await recordFinalState(cluster);
      return { faults: size.kills, notes: [`${size.tasks} tasks, ${size.workers} workers, task timeout 1 s (lease = timeout + 15 s grace)`], claims: [{ claim: "drained before the deadline", holds: drained }] };
    });
  },
};
