/**
 * A redelivery wakes the notifier's delivery loop through the LISTEN session
 * it already holds for the fan-out (the outbox channel, payload
 * "redelivery"), sent with the commit that put the rows back: with the
 * delivery poll set to a minute here, the redelivered webhook arrives within
 * seconds, as a new delivery does. It used to wait for the next poll
 * (NOTIFIER_DELIVERY_POLL_MS, 1 s by default; a minute here).
 */
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver, type ReceivedRequest } from "../helpers/http-receiver.js";
import { createTenant, createTestDatabase, createTestRedis, gql, startGateway, type CreatedTenant, type StartedGateway, type TestDatabase, type TestRedis } from "../helpers/platform.js";
import { runPullTask } from "../helpers/pull-task.js";

/** Far beyond the test's waits: only a wake-up can make a delivery prompt. */
const DELIVERY_POLL_MS = 60_000;
/** Generous for a loaded box, and well short of the poll. */
const PROMPTLY_MS = 15_000;

let tdb: TestDatabase;
let redis: TestRedis;
let receiver: HttpReceiver;
let gateway: StartedGateway;
let notifier: AppProcess;
let tenant: CreatedTenant;

const hits = (path: string): ReceivedRequest[] => receiver.requests.filter((r) => r.path === path);

async function api<T>(query: string, variables: Record<string, unknown>): Promise<T> {
  const res = await gql<T>(gateway.url, query, variables, tenant.apiKey);
  if (!res.data || res.errors) throw new Error(JSON.stringify(res.errors));
  return res.data;
}

async function webhookWithOneDelivery(path: string): Promise<{ webhookId: string; deliveryId: string }> {
  const { createWebhook } = await api<{ createWebhook: { webhook: { id: string } } }>(
    `mutation ($i: CreateWebhookInput!) { createWebhook(input: $i) { webhook { id } } }`,
    { i: { url: `${receiver.url}${path}`, events: ["*"] } },
  );
  const taskId = await runPullTask(gateway.url, tenant.apiKey, { type: "hook.wakeup", workerId: "wakeup-test" });
  // A new delivery is woken by the outbox's own notification: it arrives without the poll.
  await waitFor(`the first delivery to ${path}`, () => hits(path).length === 1, PROMPTLY_MS, 20);
  const delivery = await waitFor("the delivery to be recorded DELIVERED", async () => {
    const { rows } = await tdb.db.pool.query<{ id: string }>("SELECT id FROM webhook_deliveries WHERE webhook_id = $1 AND task_id = $2 AND status = 'DELIVERED'", [
      createWebhook.webhook.id,
      taskId,
    ]);
    return rows[0];
  }, PROMPTLY_MS, 20);
  return { webhookId: createWebhook.webhook.id, deliveryId: delivery.id };
}

beforeAll(async () => {
  tdb = await createTestDatabase("redeliverwake");
  redis = createTestRedis();
  receiver = await startReceiver((_req: ReceivedRequest, res: ServerResponse) => {
    res.writeHead(204).end();
  });
  gateway = await startGateway({ databaseUrl: tdb.url, redis, env: { ALLOW_PRIVATE_TARGETS: "1" } });
  notifier = startApp("notifier", {
    DATABASE_URL: tdb.url,
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: redis.prefix,
    ALLOW_PRIVATE_TARGETS: "1",
    NOTIFIER_DELIVERY_POLL_MS: String(DELIVERY_POLL_MS),
    LOG_LEVEL: "warn",
  });
  tenant = await createTenant(gateway);
  // Its LISTEN session is open once a task's delivery has arrived without a poll.
  await webhookWithOneDelivery("/warmup");
}, 120_000);

afterAll(async () => {
  const code = await notifier?.stop();
  await gateway?.close();
  await receiver?.close();
  await redis?.cleanup();
  await tdb?.drop();
  expect(code, notifier?.output()).toBe(0);
});

describe("redelivery wakes the notifier", () => {
  it("redeliverWebhookDelivery: the delivery goes out again within seconds, not at the next poll", async () => {
    const { deliveryId } = await webhookWithOneDelivery("/one");
    const res = await api<{ redeliverWebhookDelivery: { status: string } }>(`mutation ($id: ID!) { redeliverWebhookDelivery(id: $id) { status } }`, { id: deliveryId });
    expect(res.redeliverWebhookDelivery.status).toBe("PENDING");
    await waitFor("the redelivery to arrive", () => hits("/one").length === 2, PROMPTLY_MS, 20);
  });

  it("redeliverWebhookDeliveries: the webhook's FAILED deliveries go out again within seconds", async () => {
    const { webhookId, deliveryId } = await webhookWithOneDelivery("/many");
    // As a receiver's outage would have left it.
    await tdb.db.pool.query("UPDATE webhook_deliveries SET status = 'FAILED' WHERE id = $1", [deliveryId]);
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const res = await api<{ redeliverWebhookDeliveries: number }>(`mutation ($w: ID!, $s: DateTime!) { redeliverWebhookDeliveries(webhookId: $w, since: $s) }`, { w: webhookId, s: since });
    expect(res.redeliverWebhookDeliveries).toBe(1);
    await waitFor("the redelivery to arrive", () => hits("/many").length === 2, PROMPTLY_MS, 20);
  });
});
