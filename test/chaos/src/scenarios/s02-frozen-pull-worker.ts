import { refusedCount, startPullWorker } from "../lib/pull-workers.js";
import { drain, recordFinalState, submitItems } from "../lib/workload.js";
import { sleep, waitUntil } from "../lib/wait.js";
import { range, withPushPlatform } from "./platform.js";
import type { Scenario } from "./scenario.js";

/**
 * A pull worker frozen (SIGSTOP) past its lease while it holds tasks: the
 * leases expire, another worker runs those tasks, and when the frozen one is
 * resumed (SIGCONT) its heartbeats and completions are refused.
 */
export const frozenPullWorker: Scenario = {
  id: 2,
  title: "A pull worker SIGSTOPped past its lease and resumed",
  fault: "SIGSTOP of an SDK pull worker holding leases for 2.5× the lease, then SIGCONT",
  async run(ctx) {
    const size = ctx.quick ? { tasks: 40, freezes: 1 } : { tasks: 1_500, freezes: 3 };
    const lease = { leaseSeconds: 2, holdMs: 300, concurrency: 4, queue: "pull" };
    return withPushPlatform(ctx, { label: "s2", workers: 0, workerConcurrency: 1 }, async ({ cluster, tenant }) => {
      await cluster.upsertQueue(tenant, { name: "pull", mode: "PULL" });
      const frozen = startPullWorker(cluster, tenant, lease);
      startPullWorker(cluster, tenant, lease);
      await submitItems(cluster, tenant, range(size.tasks).map((i) => ({ item: `s2-${i}`, queue: "pull", timeoutSeconds: 30 })));
      const startsBy = (id: string) => cluster.history.events.filter((e) => e.kind === "start" && e.workerId === id).length;
      for (let k = 0; k < size.freezes; k++) {
        // Freeze it while it holds work, so there are leases to expire.
        const before = startsBy(frozen.id);
        await waitUntil("the worker to hold leases", () => startsBy(frozen.id) > before, 20_000, 20);
        ctx.log(`freeze ${k + 1}/${size.freezes}: SIGSTOP ${frozen.id} for ${lease.leaseSeconds * 2.5} s`);
        await cluster.freeze(frozen, lease.leaseSeconds * 2_500);
        await sleep(1_500);
      }
      const drained = await drain(cluster.database.db, ctx.quick ? 60_000 : 240_000, (left) => ctx.log(`${left} tasks unfinished`));
      await sleep(1_000);
      await recordFinalState(cluster);
      const refused = refusedCount(cluster);
      ctx.log(`stale outcomes refused: ${refused}`);
      return {
        faults: size.freezes,
        notes: [
          `${size.tasks} PULL tasks, 2 SDK workers (concurrency 4, lease 2 s, 300 ms per task), stale outcomes refused: ${refused}`,
          "recovery time includes the wait in line: a task whose lease expired is queued again behind the backlog submitted before it",
        ],
        claims: [
          { claim: "drained before the deadline", holds: drained },
          { claim: "the resumed worker's stale outcomes were refused (at least one)", holds: refused > 0 },
        ],
      };
    });
  },
};
