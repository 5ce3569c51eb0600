import { drain, recordFinalState, submitItems } from "../lib/workload.js";
import { sleep, waitUntil } from "../lib/wait.js";
import { range, withPushPlatform } from "./platform.js";
import type { Scenario } from "./scenario.js";

/** What a client may see while Postgres is down: a typed, retryable error, never a dropped connection or an untyped failure. */
const TYPED = /^(503 OVERLOADED|500 INTERNAL_SERVER_ERROR) \+retryAfter$/;

/**
 * The suite's own PostgreSQL is stopped (fast shutdown: every connection
 * cut) and started again while clients submit and workers complete. No
 * process is restarted; clients retry on what they are told.
 */
export const postgresRestart: Scenario = {
  id: 5,
  title: "PostgreSQL restarted under load",
  fault: "pg_ctl stop -m fast of the suite's own PostgreSQL, down for a while, then started again; no platform process restarted",
  async run(ctx) {
    const size = ctx.quick ? { maxTasks: 2_000, downMs: 2_000, pauseMs: 100, batch: 10 } : { maxTasks: 20_000, downMs: 10_000, pauseMs: 20, batch: 50 };
    return withPushPlatform(ctx, { label: "s5", ownPostgres: true, workers: 2, workerConcurrency: 10, endpointDelayMs: 20 }, async ({ cluster, tenant }) => {
      cluster.tally.clear();
      // Four clients keep submitting small batches from before the outage until a second after it, so
      // some are always in flight while Postgres is down (bounded by maxTasks).
      let next = 0;
      let restoredAt = Number.POSITIVE_INFINITY;
      const client = async () => {
        while (Date.now() < restoredAt + 1_000 && next < size.maxTasks) {
          const batch = Array.from({ length: size.batch }, () => ({ item: `s5-${next++}`, queue: "push", timeoutSeconds: 2 }));
          await submitItems(cluster, tenant, batch, size.batch, 1);
          await sleep(size.pauseMs);
        }
      };
      const submitting = Promise.all(range(4).map(client));
      await sleep(ctx.quick ? 1_500 : 4_000);
      ctx.log(`PostgreSQL down for ${size.downMs} ms`);
      cluster.history.record({ kind: "fault", fault: "restart", target: "postgres" });
      await cluster.postgres!.restart(size.downMs);
      restoredAt = Date.now();
      cluster.history.record({ kind: "restored", target: "postgres" });
      ctx.log("PostgreSQL back");
      await submitting;
      const tasks = next;
      const healthy = await waitUntil("gateway /healthz 200", async () => (await fetch(cluster.gatewayUrl.replace("/graphql", "/healthz"))).status === 200, 30_000, 200).catch(() => false);
      const drained = await drain(cluster.database.db, ctx.quick ? 90_000 : 240_000, (left) => ctx.log(`${left} tasks unfinished`));
      await recordFinalState(cluster);
      const seen = [...cluster.tally.entries()].map(([k, n]) => `${k} ×${n}`);
      ctx.log(`client saw while down: ${seen.join(", ") || "nothing"}`);
      const untyped = [...cluster.tally.keys()].filter((k) => !TYPED.test(k));
      if (untyped.length > 0) {
        // The gateway's own account of what it could not classify.
        const lines = cluster.apps.filter((a) => a.name === "gateway").flatMap((a) => a.output().split("\n")).filter((l) => l.includes("unhandled error"));
        ctx.log(`untyped answers; gateway said: ${lines.slice(0, 2).join("\n").slice(0, 3_000)}`);
      }
      const alive = cluster.apps.every((a) => a.alive());
      return {
        faults: 1,
        notes: [`${tasks} tasks submitted by 4 clients before, during and after the outage; PostgreSQL down ${size.downMs / 1000} s; answers to clients while down: ${seen.join(", ") || "none failed"}`],
        claims: [
          { claim: "drained before the deadline", holds: drained },
          { claim: "every failed answer was typed (503 OVERLOADED or 500 INTERNAL_SERVER_ERROR) with retry advice", holds: untyped.length === 0 },
          { claim: "clients did see the outage (at least one typed error)", holds: cluster.tally.size > 0 },
          { claim: "every platform process recovered without a restart", holds: alive },
          { claim: "gateway /healthz answered 200 again", holds: healthy === true },
        ],
      };
    });
  },
};
