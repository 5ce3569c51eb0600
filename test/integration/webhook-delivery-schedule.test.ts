/**
 * A webhook delivery's retries as its receiver and the API see them: every
 * attempt verifies with the official `standardwebhooks` package, carries the
 * same webhook-id and body and a fresh webhook-timestamp; a failed attempt
 * waits WEBHOOK_RETRY_SCHEDULE's step, or the receiver's Retry-After when
 * longer; and webhookDeliveries says when the next attempt is due
 * (nextAttemptAt), null once the delivery is finished. Gateway in process,
 * notifier as a process, real Postgres and Redis, receiver on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor, type AppProcess } from "../helpers/app-process.js";
import { StandardWebhook, startTestNotifier } from "../helpers/test-notifier.js";
import { startReceiver, type HttpReceiver, type ReceivedRequest } from "../helpers/http-receiver.js";
import { createTenant, createTestDatabase, createTestRedis, gql, startGateway, type CreatedTenant, type StartedGateway, type TestDatabase, type TestRedis } from "../helpers/platform.js";
import { runPullTask } from "../helpers/pull-task.js";

/** Two seconds after the first failure (±20 %), then a minute: out of the test's reach. */
const SCHEDULE = "2,60";

interface DeliveryView {
  id: string;
  taskId: string | null;
  status: string;
  attempts: number;
  lastResponseCode: number | null;
  nextAttemptAt: string | null;
}

let tdb: TestDatabase;
let redis: TestRedis;
let receiver: HttpReceiver;
let gateway: StartedGateway;
let notifier: AppProcess;
let tenant: CreatedTenant;

const hits = (path: string): ReceivedRequest[] => receiver.requests.filter((r) => r.path === path);

function verifies(secret: string, req: ReceivedRequest): boolean {
  const headers = Object.fromEntries(["webhook-id", "webhook-timestamp", "webhook-signature"].map((h) => [h, String(req.headers[h] ?? "")]));
  try {
    new StandardWebhook(secret).verify(req.body, headers);
    return true;
  } catch {
    return false;
  }
}

async function webhookAt(path: string): Promise<{ id: string; secret: string }> {
  const res = await gql<{ createWebhook: { webhook: { id: string }; secret: string } }>(
    gateway.url,
    `mutation ($u: String!) { createWebhook(input: { url: $u, events: ["task.succeeded"] }) { webhook { id } secret } }`,
    { u: `${receiver.url}${path}` },
    tenant.apiKey,
  );
  const created = res.data?.createWebhook;
  if (!created) throw new Error(JSON.stringify(res.errors));
  return { id: created.webhook.id, secret: created.secret };
}

async function deliveryOf(webhookId: string): Promise<DeliveryView | null> {
  const res = await gql<{ webhookDeliveries: DeliveryView[] }>(
    gateway.url,
    `query ($w: ID) { webhookDeliveries(webhookId: $w) { id taskId status attempts lastResponseCode nextAttemptAt } }`,
    { w: webhookId },
    tenant.apiKey,
  );
  if (!res.data) throw new Error(JSON.stringify(res.errors));
  return res.data.webhookDeliveries[0] ?? null;
}

beforeAll(async () => {
  tdb = await createTestDatabase("whsched");
  redis = createTestRedis();
  // Each path's first request fails as the path says; every later one answers 204.
  receiver = await startReceiver((req, res) => {
    if (hits(req.path).length > 1) return void res.writeHead(204).end();
    if (req.path.startsWith("/retry-after")) return void res.writeHead(429, { "retry-after": "40" }).end("slow down");
    res.writeHead(500).end("down");
  });
  gateway = await startGateway({ databaseUrl: tdb.url, redis, env: { ALLOW_PRIVATE_TARGETS: "1" } });
  notifier = startTestNotifier(tdb, redis, { WEBHOOK_RETRY_SCHEDULE: SCHEDULE });
  tenant = await createTenant(gateway);
});

afterAll(async () => {
  const code = await notifier?.stop();
  await gateway?.close();
  await receiver?.close();
  await redis?.cleanup();
  await tdb?.drop();
  expect(code, notifier?.output()).toBe(0);
});

describe("a webhook delivery's retries", () => {
  it("retries after the schedule's step under the same webhook-id and body, a fresh timestamp, each attempt verifiable", async () => {
    const hook = await webhookAt("/flaky");
    const taskId = await runPullTask(gateway.url, tenant.apiKey, { type: "hook.schedule", workerId: "schedule-test" });
    const failed = await waitFor("the first attempt recorded", async () => {
      const d = await deliveryOf(hook.id);
      return d?.attempts === 1 ? d : null;
    }, 20_000);
    const first = hits("/flaky")[0];
    expect(failed).toMatchObject({ taskId, status: "PENDING", lastResponseCode: 500 });
    // The schedule's first step, 2 s ±20 %, from when the attempt was recorded (a little after it was answered:
    // up to 2.4 s plus however long recording took on a loaded machine, so the upper bound leaves 1.6 s for that).
    const wait = Date.parse(failed.nextAttemptAt ?? "") - (first?.at ?? 0);
    expect(wait).toBeGreaterThanOrEqual(1_500);
    expect(wait).toBeLessThanOrEqual(4_000);

    const delivered = await waitFor("DELIVERED on the retry", async () => {
      const d = await deliveryOf(hook.id);
      return d?.status === "DELIVERED" ? d : null;
    }, 20_000);
    expect(delivered).toMatchObject({ attempts: 2, lastResponseCode: 204, nextAttemptAt: null });
    const [a, b] = hits("/flaky");
    expect(hits("/flaky")).toHaveLength(2);
    expect([a?.headers["webhook-id"], b?.headers["webhook-id"]]).toEqual([delivered.id, delivered.id]);
    expect(b?.body).toBe(a?.body);
    // Seconds: the retry, 1.6-2.4 s later, is signed at its own time, not the first attempt's.
    expect(Number(b?.headers["webhook-timestamp"])).toBeGreaterThan(Number(a?.headers["webhook-timestamp"]));
    for (const req of [a, b]) expect(req && verifies(hook.secret, req)).toBe(true);
  }, 40_000);

  it("waits out a Retry-After longer than the schedule's step, and says when", async () => {
    const hook = await webhookAt("/retry-after");
    await runPullTask(gateway.url, tenant.apiKey, { type: "hook.schedule", workerId: "schedule-test" });
    const held = await waitFor("the 429 recorded", async () => {
      const d = await deliveryOf(hook.id);
      return d?.attempts === 1 ? d : null;
    }, 20_000);
    const answeredAt = hits("/retry-after")[0]?.at ?? 0;
    expect(held).toMatchObject({ status: "PENDING", lastResponseCode: 429 });
    const wait = Date.parse(held.nextAttemptAt ?? "") - answeredAt;
    expect(wait).toBeGreaterThanOrEqual(40_000);
    expect(wait).toBeLessThan(43_000);
    // Nothing is sent meanwhile (the schedule's own 2 s step has long passed).
    await new Promise((r) => setTimeout(r, 4_000));
    expect(hits("/retry-after")).toHaveLength(1);

    // Deleting the webhook ends the wait: the log says FAILED at once, not PENDING for the 36 s left.
    const deleted = await gql(gateway.url, `mutation ($id: ID!) { deleteWebhook(id: $id) }`, { id: hook.id }, tenant.apiKey);
    expect(deleted.errors).toBeUndefined();
    expect(await deliveryOf(hook.id)).toMatchObject({ status: "FAILED", attempts: 1, lastResponseCode: 429, nextAttemptAt: null });
    const row = await tdb.db.pool.query("SELECT last_error FROM webhook_deliveries WHERE webhook_id = $1", [hook.id]);
    expect(row.rows).toEqual([{ last_error: "webhook was deleted" }]);
  }, 40_000);

  it("disabling the webhook stops a delivery waiting for its retry; enabled again it stays stopped until redelivered", async () => {
    const hook = await webhookAt("/retry-after-disable");
    await runPullTask(gateway.url, tenant.apiKey, { type: "hook.schedule", workerId: "schedule-test" });
    await waitFor("the 429 recorded", async () => ((await deliveryOf(hook.id))?.attempts === 1 ? true : null), 20_000);
    const since = new Date(Date.now() - 60_000).toISOString();
    const update = (enabled: boolean) =>
      gql(gateway.url, `mutation ($id: ID!, $e: Boolean) { updateWebhook(id: $id, input: { enabled: $e }) { enabled } }`, { id: hook.id, e: enabled }, tenant.apiKey);
    expect((await update(false)).errors).toBeUndefined();
    expect(await deliveryOf(hook.id)).toMatchObject({ status: "FAILED", attempts: 1, nextAttemptAt: null });
    const row = await tdb.db.pool.query("SELECT last_error FROM webhook_deliveries WHERE webhook_id = $1", [hook.id]);
    expect(row.rows).toEqual([{ last_error: "webhook is disabled: disabled by the tenant" }]);
    // Enabled again, nothing resumes on its own: the tenant redelivers what it wants.
    expect((await update(true)).errors).toBeUndefined();
    expect((await deliveryOf(hook.id))?.status).toBe("FAILED");
    const recovered = await gql<{ redeliverWebhookDeliveries: number }>(
      gateway.url,
      `mutation ($w: ID!, $s: DateTime!) { redeliverWebhookDeliveries(webhookId: $w, since: $s) }`,
      { w: hook.id, s: since },
      tenant.apiKey,
    );
    expect(recovered.data?.redeliverWebhookDeliveries).toBe(1);
    await waitFor("DELIVERED after the redelivery", async () => ((await deliveryOf(hook.id))?.status === "DELIVERED" ? true : null), 20_000);
    expect(hits("/retry-after-disable")).toHaveLength(2);
  }, 40_000);
});
