import { gql } from "../lib/api.js";
import { drain, recordFinalState } from "../lib/workload.js";
import { sleep } from "../lib/wait.js";
import { range, withPushPlatform } from "./platform.js";
import type { Scenario } from "./scenario.js";

const SUBMIT = `mutation ($i: SubmitTaskInput!) { submitTask(input: $i) { id } }`;

/**
 * Clients submit one task per idempotency key and retry whatever fails
 * (refused connections, resets, timeouts) while the only gateway is
 * SIGKILLed and restarted. Once answered, each client asks once more: the
 * same key must name the same task. The checker counts two tasks for one key
 * (in the answers or in Postgres) as unexpected.
 */
export const gatewayKills: Scenario = {
  id: 6,
  title: "Gateway killed while clients submit with idempotency keys and retry",
  fault: "SIGKILL of the gateway process (restarted on the same port) while 16 clients submit keyed tasks and retry on any failure",
  async run(ctx) {
    const size = ctx.quick ? { keys: 100, kills: 1 } : { keys: 4_000, kills: 5 };
    return withPushPlatform(ctx, { label: "s6", workers: 1, workerConcurrency: 20 }, async ({ cluster, tenant }) => {
      const h = cluster.history;
      let next = 0;
      let retries = 0;
      const submitOnce = async (key: string): Promise<string> => {
        const deadline = Date.now() + 120_000;
        for (;;) {
          const a = await gql<{ submitTask: { id: string } }>(cluster.gatewayUrl, SUBMIT, { i: { type: "chaos.ok", queue: "push", idempotencyKey: key, payload: { item: key }, timeoutSeconds: 5 } }, tenant.apiKey, 10_000);
          if (a.data?.submitTask) return a.data.submitTask.id;
          retries++;
          if (Date.now() > deadline) throw new Error(`key ${key}: no answer in 120 s: ${JSON.stringify(a.errors ?? a.networkError)}`);
          await sleep(50 + Math.random() * 150);
        }
      };
      const client = async () => {
        while (next < size.keys) {
          const key = `s6-${next++}`;
          h.record({ kind: "submit", item: key, ref: await submitOnce(key) });
          // Asked again after the answer: must be the same task.
          h.record({ kind: "submit", item: key, ref: await submitOnce(key) });
        }
      };
      const clients = Promise.all(range(16).map(client));
      for (let k = 0; k < size.kills && next < size.keys; k++) {
        await sleep(ctx.quick ? 800 : 2_000);
        const gateway = cluster.running("gateway")[0]!;
        ctx.log(`kill ${k + 1}/${size.kills}: SIGKILL ${gateway.id} at key ${next}`);
        cluster.kill(gateway);
        await gateway.exited;
        await cluster.startGateway();
        cluster.history.record({ kind: "restored", target: "gateway" });
      }
      await clients;
      const drained = await drain(cluster.database.db, ctx.quick ? 60_000 : 240_000, (left) => ctx.log(`${left} tasks unfinished`));
      await recordFinalState(cluster);
      const perKey = await cluster.database.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM tasks GROUP BY idempotency_key HAVING count(*) > 1`);
      return {
        faults: size.kills,
        notes: [
          `${size.keys} keys, 16 clients, each key submitted until answered and once more; ${retries} client retries`,
          `gateway start to /healthz 200 (first start, then each restart): ${cluster.gatewayStartsMs.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(", ")}`,
        ],
        claims: [
          { claim: "drained before the deadline", holds: drained },
          { claim: "exactly one task per key in Postgres", holds: perKey.rows.length === 0 },
        ],
      };
    });
  },
};
