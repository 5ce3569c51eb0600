import { gql, untilAnswered } from "../lib/api.js";
import { startEndpoint, type ItemOf } from "../lib/endpoint.js";
import { drain, recordFinalState, submitItems } from "../lib/workload.js";
import { sleep, waitUntil } from "../lib/wait.js";
import { range, withPushPlatform } from "./platform.js";
import type { Scenario } from "./scenario.js";

/** Webhook envelopes {type, data: {task: {id}}}: one item per task's task.succeeded event. */
const webhookItem: ItemOf = (req) => {
  const task = (req.json?.data as { task?: { id?: string } } | undefined)?.task;
  return typeof task?.id === "string" ? { item: `wh:${task.id}`, attempt: 1 } : undefined;
};

/** Delivery status → the checker's terminal vocabulary. */
const FINAL: Record<string, string> = { DELIVERED: "SUCCEEDED", FAILED: "DEAD", PENDING: "PENDING" };

/**
 * The tenant's webhook receiver is down for a long stretch (first answering
 * 503, then refusing connections) while tasks succeed, then comes back.
 * Every task.succeeded event must arrive, each under one webhook-id across
 * all its retries.
 */
export const webhookOutage: Scenario = {
  id: 9,
  title: "Webhook receiver down for a long stretch, then back",
  fault: "webhook receiver answers 503 for the first half of the outage and refuses connections for the second half",
  async run(ctx) {
    const size = ctx.quick ? { tasks: 60, downMs: 4_000 } : { tasks: 2_000, downMs: 60_000 };
    const env = { WEBHOOK_RETRY_SCHEDULE: ctx.quick ? "1,1,1,2,2,2,2,2,2,2,2,2" : "1,2,4,8,10,10,10,10,10,10,10,10,10,10,10" };
    return withPushPlatform(ctx, { label: "s9", workers: 1, workerConcurrency: 20, notifier: true, env }, async ({ cluster, tenant }) => {
      const receiver = await startEndpoint({ history: cluster.history, itemOf: webhookItem });
      try {
        await untilAnswered(
          () => gql(cluster.gatewayUrl, `mutation ($i: CreateWebhookInput!) { createWebhook(input: $i) { webhook { id } } }`, { i: { url: `${receiver.url}/webhook`, events: ["task.succeeded"] } }, tenant.apiKey),
          cluster.tally,
          "createWebhook",
        );
        receiver.setDown(true);
        cluster.history.record({ kind: "fault", fault: "receiver-503", target: "webhook-receiver" });
        await submitItems(cluster, tenant, range(size.tasks).map((i) => ({ item: `s9-${i}`, queue: "push" })));
        for (const e of cluster.history.events.filter((x) => x.kind === "submit")) cluster.history.record({ kind: "submit", item: `wh:${e.kind === "submit" ? e.ref : ""}` });
        await sleep(size.downMs / 2);
        ctx.log("receiver now refuses connections");
        await receiver.closeListener();
        await sleep(size.downMs / 2);
        await receiver.reopen();
        receiver.setDown(false);
        cluster.history.record({ kind: "restored", target: "webhook-receiver" });
        ctx.log("receiver back");
        const drained = await drain(cluster.database.db, 60_000);
        const delivered = await waitUntil("every delivery to settle", async () => {
          const r = await cluster.database.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'PENDING'`);
          return r.rows[0]!.n === 0;
        }, ctx.quick ? 60_000 : 240_000, 500).catch(() => false);
        await recordFinalState(cluster);
        const rows = await cluster.database.db.pool.query<{ task_id: string; status: string; attempts: number }>(`SELECT task_id, status, attempts FROM webhook_deliveries WHERE event = 'task.succeeded'`);
        for (const d of rows.rows) cluster.history.record({ kind: "final", item: `wh:${d.task_id}`, status: FINAL[d.status] ?? d.status });
        const hooks = await cluster.database.db.pool.query<{ enabled: boolean; disabled_reason: string | null }>(`SELECT enabled, disabled_reason FROM webhooks`);
        const retried = rows.rows.filter((d) => d.attempts > 1).length;
        return {
          faults: 1,
          notes: [`${size.tasks} task.succeeded events; receiver down ${size.downMs / 1000} s; ${retried} deliveries needed retries; webhook enabled at the end: ${hooks.rows.map((h) => `${h.enabled}${h.disabled_reason ? ` (${h.disabled_reason})` : ""}`).join(", ")}`],
          claims: [
            { claim: "tasks drained", holds: drained },
            { claim: "every delivery settled", holds: delivered === true },
            { claim: "deliveries were retried through the outage", holds: retried > 0 },
          ],
        };
      } finally {
        await receiver.close();
      }
    });
  },
};
