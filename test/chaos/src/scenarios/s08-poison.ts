import type { AppProcess } from "../lib/apps.js";
import type { Cluster, Tenant } from "../lib/cluster.js";
import { startPullWorker } from "../lib/pull-workers.js";
import { drain, recordFinalState, submitItems, type ItemSpec } from "../lib/workload.js";
import { sleep } from "../lib/wait.js";
import { range, withPushPlatform } from "./platform.js";
import type { Scenario } from "./scenario.js";

const PULL = { queue: "pull", leaseSeconds: 2, holdMs: 0, concurrency: 2 };

/** Keeps one pull worker running for the tenant, replacing any that crashed (bounded). */
function superviseCrashingWorkers(cluster: Cluster, tenant: Tenant, maxRestarts: number): { stop(): void; restarts(): number } {
  let stopped = false;
  let restarts = 0;
  const keep = (app: AppProcess) => {
    void app.exited.then(() => {
      if (stopped || restarts >= maxRestarts) return;
      restarts++;
      keep(startPullWorker(cluster, tenant, PULL));
    });
  };
  keep(startPullWorker(cluster, tenant, PULL));
  return { stop: () => void (stopped = true), restarts: () => restarts };
}

/**
 * Tenant A submits poison next to ordinary work: PUSH tasks whose endpoint
 * hangs past the timeout or answers 500 with garbage, and PULL tasks that
 * crash the worker process that leases them. Each poison task must end DEAD
 * once its attempts are spent; tenants B and C (and A's ordinary tasks) must
 * complete once each, without waiting on the poison.
 */
export const poisonTasks: Scenario = {
  id: 8,
  title: "Poison tasks: endpoint hangs, returns garbage, or crashes the worker process",
  fault: "PUSH endpoint hangs past the task timeout / answers 500 with binary garbage; PULL handler exits the worker process (restarted by a supervisor)",
  async run(ctx) {
    const size = ctx.quick ? { poison: 2, normal: 60 } : { poison: 20, normal: 2_000 };
    return withPushPlatform(ctx, { label: "s8", workers: 2, workerConcurrency: 10, endpointDelayMs: 10 }, async ({ cluster, endpoint, tenant: a }) => {
      const others = [await cluster.createTenant("s8-b"), await cluster.createTenant("s8-c")];
      for (const t of others) await cluster.upsertQueue(t, { name: "push", mode: "PUSH", endpointUrl: `${endpoint.url}/task` });
      await cluster.upsertQueue(a, { name: "pull", mode: "PULL" });
      const supervisor = superviseCrashingWorkers(cluster, a, size.poison * 3 + 5);
      const poison: ItemSpec[] = range(size.poison).flatMap((i) => [
        { item: `s8-a-hang-${i}`, queue: "push", mode: "hang", timeoutSeconds: 1, maxAttempts: 2, expect: "dead" },
        { item: `s8-a-garbage-${i}`, queue: "push", mode: "garbage", maxAttempts: 3, expect: "dead" },
        { item: `s8-a-crash-${i}`, queue: "pull", mode: "crash", maxAttempts: 2, timeoutSeconds: 5, expect: "dead" },
      ]);
      const ordinaryA: ItemSpec[] = range(size.normal / 5).flatMap((i) => [
        { item: `s8-a-ok-${i}`, queue: "push" },
        { item: `s8-a-pull-ok-${i}`, queue: "pull", timeoutSeconds: 30 },
      ]);
      await submitItems(cluster, a, [...poison, ...ordinaryA]);
      await Promise.all(others.map((t, n) => submitItems(cluster, t, range(size.normal).map((i) => ({ item: `s8-${"bc"[n]}-${i}`, queue: "push" })))));
      const drained = await drain(cluster.database.db, ctx.quick ? 90_000 : 300_000, (left) => ctx.log(`${left} tasks unfinished`));
      supervisor.stop();
      await sleep(200);
      await recordFinalState(cluster);
      // Other tenants' latency, submit → side effect: must not wait on A's poison.
      const submitted = new Map<string, number>();
      const latencies: number[] = [];
      for (const e of cluster.history.events) {
        if (e.kind === "submit" && /^s8-[bc]-/.test(e.item)) submitted.set(e.item, e.at);
        if (e.kind === "effect" && submitted.has(e.item)) latencies.push(e.at - submitted.get(e.item)!);
      }
      latencies.sort((x, y) => x - y);
      const p99 = latencies[Math.floor(latencies.length * 0.99)] ?? 0;
      const max = latencies.at(-1) ?? 0;
      ctx.log(`other tenants: p99 ${p99} ms, max ${max} ms; pull worker restarts after crashes: ${supervisor.restarts()}`);
      return {
        faults: supervisor.restarts(),
        notes: [
          `tenant A: ${size.poison} hang + ${size.poison} garbage + ${size.poison} crash poison tasks and ${ordinaryA.length} ordinary; tenants B, C: ${size.normal} each`,
          `B and C submit → side effect: p99 ${p99} ms, max ${max} ms; pull worker processes crashed by poison and restarted: ${supervisor.restarts()}`,
        ],
        claims: [
          { claim: "drained before the deadline", holds: drained },
          { claim: "B and C never waited on A's poison (max submit → effect under 30 s)", holds: max < 30_000 },
        ],
      };
    });
  },
};
