import { drain, recordFinalState, submitItems } from "../lib/workload.js";
import { range, withPushPlatform } from "./platform.js";
import type { Scenario } from "./scenario.js";

/**
 * Every task of every tenant is due in the same second. All must run once,
 * and fairness must show in the first starts: every tenant's first task
 * starts among the first tenth of all starts, however many tasks the others
 * have.
 */
export const thunderingHerd: Scenario = {
  id: 10,
  title: "A thundering herd: every task due in the same second across many tenants",
  fault: "no process fault: the load is the fault (all tasks of all tenants due at one instant)",
  async run(ctx) {
    // The lead must cover creating the tenants and submitting everything even on a loaded
    // machine: a tenant whose tasks arrive after the due second joins late by construction.
    const size = ctx.quick ? { tenants: 5, tasks: 500, leadMs: 15_000 } : { tenants: 20, tasks: 50_000, leadMs: 60_000 };
    return withPushPlatform(ctx, { label: "s10", workers: 2, workerConcurrency: ctx.quick ? 20 : 100 }, async ({ cluster, endpoint, tenant: first }) => {
      const tenants = [first];
      for (let i = 1; i < size.tenants; i++) tenants.push(await cluster.createTenant(`s10-${i}`));
      for (const t of tenants.slice(1)) await cluster.upsertQueue(t, { name: "push", mode: "PUSH", endpointUrl: `${endpoint.url}/task` });
      const due = new Date(Math.ceil((Date.now() + size.leadMs) / 1_000) * 1_000);
      const perTenant = size.tasks / size.tenants;
      await Promise.all(
        tenants.map((t, n) => submitItems(cluster, t, range(perTenant).map((i) => ({ item: `s10-${n}-${i}`, queue: "push", runAt: due.toISOString() })), 500, 1)),
      );
      const submittedBy = Date.now();
      ctx.log(`${size.tasks} tasks submitted ${((due.getTime() - submittedBy) / 1000).toFixed(1)} s before they are due`);
      const drained = await drain(cluster.database.db, ctx.quick ? 90_000 : 480_000, (left) => ctx.log(`${left} tasks unfinished`));
      const finishedAt = Date.now();
      await recordFinalState(cluster);
      const firsts = await cluster.database.db.pool.query<{ tenant_id: string; first_ms: number; rank: number }>(
        `WITH s AS (SELECT tenant_id, started_at, row_number() OVER (ORDER BY started_at, id) AS n FROM task_attempts)
         SELECT tenant_id, extract(epoch FROM min(started_at) - $1::timestamptz) * 1000 AS first_ms, min(n)::int AS rank FROM s GROUP BY tenant_id`,
        [due],
      );
      const worstDelay = Math.max(...firsts.rows.map((r) => Number(r.first_ms)));
      const worstRank = Math.max(...firsts.rows.map((r) => r.rank));
      ctx.log(`first start per tenant: worst ${worstDelay.toFixed(0)} ms after the due second, worst rank ${worstRank} of ${size.tasks}`);
      return {
        faults: 0,
        notes: [
          `${size.tasks} tasks across ${size.tenants} tenants due at one instant (submitted ${((due.getTime() - submittedBy) / 1000).toFixed(1)} s ahead); all done ${((finishedAt - due.getTime()) / 1000).toFixed(1)} s after it`,
          `each tenant's first task started at most ${worstDelay.toFixed(0)} ms after the due second; the latest tenant's first start was start #${worstRank} of ${size.tasks}`,
        ],
        claims: [
          { claim: "every task was submitted before the due second", holds: submittedBy < due.getTime() },
          { claim: "drained before the deadline", holds: drained },
          { claim: "every tenant had a first start", holds: firsts.rows.length === size.tenants },
          { claim: "every tenant's first task started among the first tenth of all starts", holds: worstRank <= size.tasks / 10 },
        ],
      };
    });
  },
};
