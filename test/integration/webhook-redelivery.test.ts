/**
 * Recovering from a receiver's outage: redeliverWebhookDelivery sends a
 * finished delivery again (same body, same webhook-id) for a fresh round of
 * the retry schedule; redeliverWebhookDeliveries puts a webhook's FAILED
 * deliveries since a time back to PENDING; webhookDeliveries pages with
 * status and before. The gateway and the notifier process run against a real
 * Postgres and Redis; the receiver is on 127.0.0.1.
 */
import { createHmac } from "node:crypto";
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "@tasklane/core";
import { redeliverFailedSince } from "@tasklane/db";
import { waitFor, type AppProcess } from "../helpers/app-process.js";
import { startTestNotifier } from "../helpers/test-notifier.js";
import { startReceiver, type HttpReceiver, type ReceivedRequest } from "../helpers/http-receiver.js";
import {
  codeOf,
  createTenant,
  createTestDatabase,
  createTestRedis,
  gql,
  startGateway,
  type CreatedTenant,
  type StartedGateway,
  type TestDatabase,
  type TestRedis,
} from "../helpers/platform.js";
import { runPullTask } from "../helpers/pull-task.js";

const DELIVERY = `id webhookId event taskId status attempts lastResponseCode lastError createdAt deliveredAt`;
/** The notifier's schedule here: three attempts a round, 300 ms apart (±20 %). */
const SCHEDULE = "0.3,0.3";
const ROUND = 3;

interface DeliveryView {
  id: string;
  webhookId: string | null;
  taskId: string | null;
  status: string;
  attempts: number;
  lastResponseCode: number | null;
  createdAt: string;
  deliveredAt: string | null;
}

let tdb: TestDatabase;
let redis: TestRedis;
let receiver: HttpReceiver;
let gateway: StartedGateway;
let strict: StartedGateway;
let notifier: AppProcess;
let a: CreatedTenant;
let b: CreatedTenant;

/** Per-path answers (paths unique per test); unknown paths answer 204. */
const routes = new Map<string, number>();
const hits = (path: string): ReceivedRequest[] => receiver.requests.filter((r) => r.path === path);

const api = <T>(query: string, variables: Record<string, unknown>, key: string, on: StartedGateway = gateway) => gql<T>(on.url, query, variables, key);

async function createWebhook(key: string, path: string): Promise<{ id: string; secret: string }> {
  const res = await api<{ createWebhook: { webhook: { id: string }; secret: string } }>(
    `mutation ($i: CreateWebhookInput!) { createWebhook(input: $i) { webhook { id } secret } }`,
    { i: { url: `${receiver.url}${path}`, events: ["*"] } },
    key,
  );
  const created = res.data?.createWebhook;
  if (!created) throw new Error(JSON.stringify(res.errors));
  return { id: created.webhook.id, secret: created.secret };
}

const runTask = (key: string, callbackUrl?: string) => runPullTask(gateway.url, key, { type: "hook.redeliver", workerId: "redeliver-test", callbackUrl });

async function deliveries(key: string, args: { webhookId?: string | null; first?: number; status?: string; before?: string }): Promise<DeliveryView[]> {
  const res = await api<{ webhookDeliveries: DeliveryView[] }>(
    `query ($w: ID, $f: Int, $s: WebhookDeliveryStatus, $b: ID) { webhookDeliveries(webhookId: $w, first: $f, status: $s, before: $b) { ${DELIVERY} } }`,
    { w: args.webhookId ?? null, f: args.first ?? 100, s: args.status ?? null, b: args.before ?? null },
    key,
  );
  if (!res.data) throw new Error(JSON.stringify(res.errors));
  return res.data.webhookDeliveries;
}

const REDELIVER = `mutation ($id: ID!) { redeliverWebhookDelivery(id: $id) { ${DELIVERY} } }`;
const redeliver = (key: string, id: string, on: StartedGateway = gateway) => api<{ redeliverWebhookDelivery: DeliveryView }>(REDELIVER, { id }, key, on);
const RECOVER = `mutation ($w: ID!, $s: DateTime!) { redeliverWebhookDeliveries(webhookId: $w, since: $s) }`;
const recover = (key: string, webhookId: string, since: string) => api<{ redeliverWebhookDeliveries: number }>(RECOVER, { w: webhookId, s: since }, key);

/** The delivery of `taskId` to webhook `webhookId`, once `done` holds. */
async function deliveryOf(key: string, webhookId: string, taskId: string, done: (d: DeliveryView) => boolean, what: string): Promise<DeliveryView> {
  return waitFor(what, async () => (await deliveries(key, { webhookId })).find((d) => d.taskId === taskId && done(d)) ?? null, 20_000);
}

/**
 * Every column of the given deliveries and of the tenant's webhooks, to show a
 * refusal changed nothing; first waits until the tenant has nothing in flight
 * (other deliveries of the same task settle meanwhile).
 */
async function snapshot(tenantId: string, deliveryIds: string[]): Promise<unknown> {
  await waitFor("the tenant's deliveries to settle", async () =>
    (await tdb.db.pool.query("SELECT 1 FROM webhook_deliveries WHERE tenant_id = $1 AND status = 'PENDING' AND next_attempt_at < now() + interval '1 minute'", [tenantId])).rowCount === 0,
  20_000);
  const d = await tdb.db.pool.query("SELECT * FROM webhook_deliveries WHERE tenant_id = $1 AND id = ANY($2) ORDER BY id", [tenantId, deliveryIds]);
  const w = await tdb.db.pool.query("SELECT * FROM webhooks WHERE tenant_id = $1 ORDER BY id", [tenantId]);
  return { deliveries: d.rows, webhooks: w.rows };
}

function verifiedBy(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  const id = String(headers["webhook-id"] ?? "");
  const timestamp = String(headers["webhook-timestamp"] ?? "");
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64");
  return String(headers["webhook-signature"] ?? "").split(" ").includes(`v1,${expected}`);
}

beforeAll(async () => {
  tdb = await createTestDatabase("redeliver");
  redis = createTestRedis();
  receiver = await startReceiver((req: ReceivedRequest, res: ServerResponse) => {
    res.writeHead(routes.get(req.path) ?? 204).end();
  });
  gateway = await startGateway({ databaseUrl: tdb.url, redis, env: { ALLOW_PRIVATE_TARGETS: "1" } });
  strict = await startGateway({ databaseUrl: tdb.url, redis, env: { ALLOW_PRIVATE_TARGETS: "0" } });
  notifier = startTestNotifier(tdb, redis, { WEBHOOK_RETRY_SCHEDULE: SCHEDULE });
  a = await createTenant(gateway);
  b = await createTenant(gateway);
});

afterAll(async () => {
  const code = await notifier?.stop();
  await strict?.close();
  await gateway?.close();
  await receiver?.close();
  await redis?.cleanup();
  await tdb?.drop();
  expect(code, notifier?.output()).toBe(0);
});

describe("redeliverWebhookDelivery", () => {
  it("sends a FAILED delivery again for a fresh round of retries, then a DELIVERED one, with the same body and webhook-id", async () => {
    routes.set("/down", 503);
    const hook = await createWebhook(a.apiKey, "/down");
    const taskId = await runTask(a.apiKey);
    const failed = await deliveryOf(a.apiKey, hook.id, taskId, (d) => d.status === "FAILED", "the first round to fail");
    expect(failed).toMatchObject({ attempts: ROUND, lastResponseCode: 503 });
    const first = hits("/down");
    expect(first).toHaveLength(ROUND);
    const webhookId = String(first[0]?.headers["webhook-id"]);
    expect(webhookId).toBe(failed.id);

    // Still down: a whole round again, on the schedule (not one attempt, as if the old attempts counted).
    const again = await redeliver(a.apiKey, failed.id);
    expect(again.errors).toBeUndefined();
    expect(again.data?.redeliverWebhookDelivery).toMatchObject({ id: failed.id, status: "PENDING", attempts: ROUND });
    const refailed = await deliveryOf(a.apiKey, hook.id, taskId, (d) => d.status === "FAILED" && d.attempts > ROUND, "the second round to fail");
    expect(refailed.attempts).toBe(2 * ROUND);
    const second = hits("/down").slice(ROUND);
    expect(second).toHaveLength(ROUND);
    for (let i = 1; i < second.length; i++) expect((second[i]?.at ?? 0) - (second[i - 1]?.at ?? 0)).toBeGreaterThanOrEqual(200);

    // Back up: delivered, same id header and body, signed with the webhook's secret.
    routes.set("/down", 204);
    expect((await redeliver(a.apiKey, failed.id)).errors).toBeUndefined();
    const delivered = await deliveryOf(a.apiKey, hook.id, taskId, (d) => d.status === "DELIVERED", "the redelivery to arrive");
    expect(delivered).toMatchObject({ attempts: 2 * ROUND + 1, lastResponseCode: 204 });
    // DELIVERED can be sent again too (a receiver that lost it).
    expect((await redeliver(a.apiKey, failed.id)).data?.redeliverWebhookDelivery.status).toBe("PENDING");
    await deliveryOf(a.apiKey, hook.id, taskId, (d) => d.status === "DELIVERED" && d.attempts === 2 * ROUND + 2, "the second redelivery");
    const all = hits("/down");
    expect(all).toHaveLength(2 * ROUND + 2);
    for (const req of all) {
      expect(req.headers["webhook-id"]).toBe(webhookId);
      expect(req.body).toBe(first[0]?.body);
      expect(verifiedBy(hook.secret, req.headers, req.body)).toBe(true);
    }
  });

  it("redelivers a callback while its URL is allowed; refused by a gateway that no longer allows it", async () => {
    routes.set("/cb-down", 503);
    const taskId = await runTask(a.apiKey, `${receiver.url}/cb-down`);
    const failed = await waitFor(
      "the callback to fail",
      async () => (await deliveries(a.apiKey, {})).find((d) => d.taskId === taskId && d.webhookId === null && d.status === "FAILED") ?? null,
      20_000,
    );
    const before = await snapshot(a.tenantId, [failed.id]);
    const refused = await redeliver(a.apiKey, failed.id, strict);
    expect(codeOf(refused)).toBe("CONFLICT");
    expect(await snapshot(a.tenantId, [failed.id])).toEqual(before);
    routes.set("/cb-down", 204);
    expect((await redeliver(a.apiKey, failed.id)).errors).toBeUndefined();
    await waitFor(
      "the callback to arrive",
      async () => (await deliveries(a.apiKey, {})).some((d) => d.id === failed.id && d.status === "DELIVERED"),
      20_000,
    );
    expect(new Set(hits("/cb-down").map((r) => r.headers["webhook-id"]))).toEqual(new Set([failed.id]));
  });

  it("refuses PENDING, a disabled or deleted webhook's, another tenant's and an unknown delivery, changing nothing", async () => {
    routes.set("/refusals", 503);
    const hook = await createWebhook(a.apiKey, "/refusals");
    const taskId = await runTask(a.apiKey);
    const failed = await deliveryOf(a.apiKey, hook.id, taskId, (d) => d.status === "FAILED", "the delivery to fail");
    const snap = () => snapshot(a.tenantId, [failed.id]);
    const before = await snap();
    const unchanged = async () => expect(await snap()).toEqual(before);

    // Another tenant's id and an unknown one: the same NOT_FOUND, for both mutations and the read.
    const foreign = await redeliver(b.apiKey, failed.id);
    const unknown = await redeliver(a.apiKey, newId("dlv"));
    expect([codeOf(foreign), codeOf(unknown)]).toEqual(["NOT_FOUND", "NOT_FOUND"]);
    expect(codeOf(await recover(b.apiKey, hook.id, new Date(0).toISOString()))).toBe("NOT_FOUND");
    const foreignPage = await api(`query ($b: ID) { webhookDeliveries(before: $b) { id } }`, { b: failed.id }, b.apiKey);
    expect(codeOf(foreignPage)).toBe("NOT_FOUND");
    expect(codeOf(await api(`query ($w: ID) { webhookDeliveries(webhookId: $w) { id } }`, { w: hook.id }, b.apiKey))).toBe("NOT_FOUND");
    await unchanged();

    // A read-only key may not.
    const key = await api<{ createApiKey: { secret: string } }>(`mutation { createApiKey(name: "ro", scopes: ["read"]) { secret } }`, {}, a.apiKey);
    const readOnly = key.data?.createApiKey.secret ?? "";
    expect(codeOf(await redeliver(readOnly, failed.id))).toBe("FORBIDDEN");
    expect(codeOf(await recover(readOnly, hook.id, new Date(0).toISOString()))).toBe("FORBIDDEN");
    await unchanged();

    // Disabled: CONFLICT, saying to enable it first.
    const disabled = await api(`mutation ($id: ID!) { updateWebhook(id: $id, input: { enabled: false }) { enabled } }`, { id: hook.id }, a.apiKey);
    expect(disabled.errors).toBeUndefined();
    const disabledBefore = await snap();
    const whileDisabled = await redeliver(a.apiKey, failed.id);
    expect(codeOf(whileDisabled)).toBe("CONFLICT");
    expect(whileDisabled.errors?.[0]?.message).toMatch(/enable it first/);
    expect(codeOf(await recover(a.apiKey, hook.id, new Date(0).toISOString()))).toBe("CONFLICT");
    expect(await snap()).toEqual(disabledBefore);
    await api(`mutation ($id: ID!) { updateWebhook(id: $id, input: { enabled: true }) { enabled } }`, { id: hook.id }, a.apiKey);

    // PENDING (here waiting for a retry an hour away): CONFLICT.
    await tdb.db.pool.query("UPDATE webhook_deliveries SET status = 'PENDING', next_attempt_at = now() + interval '1 hour' WHERE id = $1", [failed.id]);
    const pendingBefore = await snap();
    expect(codeOf(await redeliver(a.apiKey, failed.id))).toBe("CONFLICT");
    expect(await snap()).toEqual(pendingBefore);
    await tdb.db.pool.query("UPDATE webhook_deliveries SET status = 'FAILED', next_attempt_at = now() WHERE id = $1", [failed.id]);

    // Deleted: CONFLICT.
    expect((await api(`mutation ($id: ID!) { deleteWebhook(id: $id) }`, { id: hook.id }, a.apiKey)).errors).toBeUndefined();
    const deletedBefore = await snap();
    const whileDeleted = await redeliver(a.apiKey, failed.id);
    expect(codeOf(whileDeleted)).toBe("CONFLICT");
    expect(whileDeleted.errors?.[0]?.message).toMatch(/deleted/);
    expect(codeOf(await recover(a.apiKey, hook.id, new Date(0).toISOString()))).toBe("CONFLICT");
    expect(await snap()).toEqual(deletedBefore);
    expect(hits("/refusals")).toHaveLength(ROUND);
  });
});

describe("redeliverWebhookDeliveries", () => {
  it("puts the webhook's FAILED deliveries since a time back to PENDING and they are delivered", async () => {
    const t = await createTenant(gateway);
    routes.set("/recover", 503);
    const hook = await createWebhook(t.apiKey, "/recover");
    const other = await createWebhook(t.apiKey, "/recover-other");
    routes.set("/recover-other", 503);
    const tasks: string[] = [];
    for (let i = 0; i < 4; i++) tasks.push(await runTask(t.apiKey));
    await waitFor("every delivery to fail", async () => {
      const all = await deliveries(t.apiKey, {});
      return all.length === 8 && all.every((d) => d.status === "FAILED");
    }, 20_000);
    const mine = (await deliveries(t.apiKey, { webhookId: hook.id })).reverse(); // oldest first
    const since = mine[1]?.createdAt ?? "";
    routes.set("/recover", 204);

    const res = await recover(t.apiKey, hook.id, since);
    expect(res.errors).toBeUndefined();
    expect(res.data?.redeliverWebhookDeliveries).toBe(3);
    const rows = await tdb.db.pool.query<{ id: string; status: string; round_start_attempts: number }>(
      "SELECT id, status, round_start_attempts FROM webhook_deliveries WHERE tenant_id = $1 AND webhook_id = $2 ORDER BY created_at, id",
      [t.tenantId, hook.id],
    );
    expect(rows.rows[0]?.status).toBe("FAILED");
    for (const r of rows.rows.slice(1)) {
      expect(r.status).not.toBe("FAILED"); // PENDING, or already DELIVERED by the notifier
      expect(r.round_start_attempts).toBe(ROUND);
    }
    await waitFor("the recovered deliveries to arrive", async () => {
      const now = await deliveries(t.apiKey, { webhookId: hook.id });
      return now.filter((d) => d.status === "DELIVERED").length === 3;
    }, 20_000);
    const final = await deliveries(t.apiKey, { webhookId: hook.id });
    expect(final.map((d) => d.status)).toEqual(["DELIVERED", "DELIVERED", "DELIVERED", "FAILED"]);
    // The other webhook's deliveries were left alone; nothing FAILED since `since` is left.
    expect((await deliveries(t.apiKey, { webhookId: other.id })).every((d) => d.status === "FAILED" && d.attempts === ROUND)).toBe(true);
    expect((await recover(t.apiKey, hook.id, since)).data?.redeliverWebhookDeliveries).toBe(0);
    // Each delivery was sent under its own id, the same in every round.
    const ids = hits("/recover").map((r) => String(r.headers["webhook-id"]));
    expect(new Set(ids)).toEqual(new Set(mine.map((d) => d.id)));
  });

  it("puts back at most `max` a call, oldest first, and the same since takes the rest", async () => {
    const t = await createTenant(gateway);
    const hook = await createWebhook(t.apiKey, "/recover-bounded");
    const base = Date.now() - 60_000;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = newId("dlv");
      ids.push(id);
      await tdb.db.pool.query(
        `INSERT INTO webhook_deliveries (id, tenant_id, webhook_id, url, event, body, status, attempts, created_at)
         VALUES ($1, $2, $3, $4, 'task.succeeded', '{}', 'FAILED', 3, $5)`,
        [id, t.tenantId, hook.id, `${receiver.url}/recover-bounded`, new Date(base + i * 1000)],
      );
    }
    const put = (max: number) => redeliverFailedSince(tdb.db, t.tenantId, hook.id, new Date(base), max);
    // Put back: PENDING, or already DELIVERED by the notifier (the receiver answers 204).
    const putBack = async () =>
      (await tdb.db.pool.query<{ id: string }>("SELECT id FROM webhook_deliveries WHERE webhook_id = $1 AND status <> 'FAILED' ORDER BY created_at", [hook.id])).rows.map((r) => r.id);
    expect(await put(2)).toBe(2);
    expect(await putBack()).toEqual(ids.slice(0, 2));
    expect(await put(2)).toBe(2);
    expect(await putBack()).toEqual(ids.slice(0, 4));
    expect(await put(2)).toBe(1);
    expect(await put(2)).toBe(0);
    expect(await redeliverFailedSince(tdb.db, b.tenantId, hook.id, new Date(base))).toBe(0);
  });
});

describe("webhookDeliveries paging", () => {
  it("walks every delivery exactly once, newest first, with before and status, for the tenant and for one webhook", async () => {
    const t = await createTenant(gateway);
    const hook = await createWebhook(t.apiKey, "/paging");
    await tdb.db.pool.query("UPDATE webhooks SET enabled = false WHERE id = $1", [hook.id]);
    const statuses = ["FAILED", "DELIVERED", "PENDING"];
    const base = Date.now() - 3_600_000;
    for (let i = 0; i < 37; i++) {
      // Groups of three share a created_at, so ties are settled by id.
      await tdb.db.pool.query(
        `INSERT INTO webhook_deliveries (id, tenant_id, webhook_id, url, event, body, status, next_attempt_at, created_at)
         VALUES ($1, $2, $3, $4, 'task.succeeded', '{}', $5::"DeliveryStatus", now() + interval '1 day', $6)`,
        [newId("dlv"), t.tenantId, i % 4 === 0 ? null : hook.id, `${receiver.url}/paging`, statuses[i % 3], new Date(base + Math.floor(i / 3) * 1000)],
      );
    }
    const expected = async (webhookId: string | null, status: string | null) =>
      (
        await tdb.db.pool.query<{ id: string }>(
          `SELECT id FROM webhook_deliveries WHERE tenant_id = $1 AND ($2::text IS NULL OR webhook_id = $2) AND ($3::text IS NULL OR status::text = $3)
           ORDER BY created_at DESC, id DESC`,
          [t.tenantId, webhookId, status],
        )
      ).rows.map((r) => r.id);
    for (const webhookId of [null, hook.id]) {
      for (const status of [null, ...statuses]) {
        const walked: string[] = [];
        let before: string | undefined;
        for (let page = 0; page < 50; page++) {
          const rows = await deliveries(t.apiKey, { webhookId, first: 4, ...(status ? { status } : {}), ...(before ? { before } : {}) });
          for (const r of rows) {
            if (status) expect(r.status).toBe(status);
            if (webhookId) expect(r.webhookId).toBe(webhookId);
          }
          walked.push(...rows.map((r) => r.id));
          if (rows.length < 4) break;
          before = rows[rows.length - 1]?.id;
        }
        const want = await expected(webhookId, status);
        expect(want.length).toBeGreaterThan(4);
        expect({ webhookId, status, walked }).toEqual({ webhookId, status, walked: want });
      }
    }
    // Another tenant's cursor is NOT_FOUND, as an unknown one.
    const mine = await deliveries(t.apiKey, { first: 1 });
    expect(codeOf(await api(`query ($b: ID) { webhookDeliveries(before: $b) { id } }`, { b: newId("dlv") }, t.apiKey))).toBe("NOT_FOUND");
    expect(codeOf(await api(`query ($b: ID) { webhookDeliveries(before: $b) { id } }`, { b: mine[0]?.id }, a.apiKey))).toBe("NOT_FOUND");
  });
});
