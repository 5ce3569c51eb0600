/**
 * The webhook API end to end: createWebhook / webhooks / updateWebhook /
 * deleteWebhook / webhookDeliveries through the gateway, a real delivery by the notifier
 * process verified with a Standard Webhooks check written here from the spec,
 * an endpoint disabled with its reason visible to the tenant and re-enabled
 * by it with the same secret, and the SSRF
 * policy at registration with ALLOW_PRIVATE_TARGETS=0 (DNS through the
 * gateway's resolver seam, so no test depends on outside DNS).
 */
import { createHmac } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "@tasklane/core";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
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

const WEBHOOK = `id url events enabled disabledReason failureStreak createdAt`;
const DELIVERY = `id webhookId event taskId status attempts lastResponseCode lastError createdAt deliveredAt`;

interface WebhookView {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  disabledReason: string | null;
  failureStreak: number;
}

interface DeliveryView {
  id: string;
  webhookId: string | null;
  event: string;
  taskId: string | null;
  status: string;
  attempts: number;
  lastResponseCode: number | null;
  lastError: string | null;
}

let tdb: TestDatabase;
let redis: TestRedis;
let receiver: HttpReceiver;
let gateway: StartedGateway;
let strict: StartedGateway;
let notifier: AppProcess;
let a: CreatedTenant;
let b: CreatedTenant;

/** The strict gateway's DNS: a few names that point inside, everything else somewhere public. */
const fakeDns: Record<string, string[]> = {
  "loopback.example.test": ["127.0.0.1"],
  "metadata.example.test": ["169.254.169.254"],
  "v6-loopback.example.test": ["::1"],
  "mixed.example.test": ["93.184.216.34", "10.1.2.3"],
};

const api = <T>(query: string, variables: Record<string, unknown>, key: string, on: StartedGateway = gateway) => gql<T>(on.url, query, variables, key);

async function createWebhook(key: string, url: string, events: string[], on: StartedGateway = gateway) {
  return api<{ createWebhook: { webhook: WebhookView; secret: string } }>(
    `mutation ($i: CreateWebhookInput!) { createWebhook(input: $i) { webhook { ${WEBHOOK} } secret } }`,
    { i: { url, events } },
    key,
    on,
  );
}

const UPDATE = `mutation ($id: ID!, $i: UpdateWebhookInput!) { updateWebhook(id: $id, input: $i) { ${WEBHOOK} } }`;
const updateWebhook = (key: string, id: string, input: Record<string, unknown>, on: StartedGateway = gateway) =>
  api<{ updateWebhook: WebhookView }>(UPDATE, { id, i: input }, key, on);

const listWebhooks = async (key: string) => (await api<{ webhooks: WebhookView[] }>(`{ webhooks { ${WEBHOOK} } }`, {}, key)).data?.webhooks ?? [];

const deliveries = (key: string, webhookId: string | null) =>
  api<{ webhookDeliveries: DeliveryView[] }>(`query ($id: ID) { webhookDeliveries(webhookId: $id, first: 10) { ${DELIVERY} } }`, { id: webhookId }, key);

const runTask = (key: string) => runPullTask(gateway.url, key, { type: "hook.test", workerId: "hook-test" });

/** Standard Webhooks, from the spec: HMAC-SHA256 over "id.timestamp.body" keyed with base64-decoded whsec_ secret. */
function verifiedBy(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  const id = String(headers["webhook-id"] ?? "");
  const timestamp = String(headers["webhook-timestamp"] ?? "");
  const signatures = String(headers["webhook-signature"] ?? "").split(" ");
  if (id === "" || !/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64");
  return signatures.includes(`v1,${expected}`);
}

beforeAll(async () => {
  tdb = await createTestDatabase("rthook");
  redis = createTestRedis();
  receiver = await startReceiver((req, res) => {
    if (req.path === "/gone") res.writeHead(410).end("gone");
    else res.writeHead(204).end();
  });
  gateway = await startGateway({ databaseUrl: tdb.url, redis, env: { ALLOW_PRIVATE_TARGETS: "1" } });
  strict = await startGateway({
    databaseUrl: tdb.url,
    redis,
    env: { ALLOW_PRIVATE_TARGETS: "0" },
    deps: { resolver: async (host) => fakeDns[host] ?? ["93.184.216.34"] },
  });
  notifier = startApp("notifier", {
    DATABASE_URL: tdb.url,
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: redis.prefix,
    ALLOW_PRIVATE_TARGETS: "1",
    WEBHOOK_RETRY_SCHEDULE: "0.2,0.2",
    LOG_LEVEL: "warn",
  });
  a = await createTenant(gateway);
  b = await createTenant(gateway);
});

afterAll(async () => {
  await notifier?.stop();
  await strict?.close();
  await gateway?.close();
  await receiver?.close();
  await redis?.cleanup();
  await tdb?.drop();
});

describe("webhook API", () => {
  it("creates an endpoint, shows its secret once, lists it per tenant and soft-deletes it", async () => {
    const created = await createWebhook(a.apiKey, `${receiver.url}/crud`, ["task.succeeded", "task.dead", "task.succeeded"]);
    expect(created.errors).toBeUndefined();
    const { webhook, secret } = created.data!.createWebhook;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(webhook).toMatchObject({ url: `${receiver.url}/crud`, events: ["task.dead", "task.succeeded"], enabled: true, disabledReason: null, failureStreak: 0 });
    expect(webhook.id).toMatch(/^whk_/);

    expect((await listWebhooks(a.apiKey)).map((w) => w.id)).toContain(webhook.id);
    expect((await listWebhooks(b.apiKey)).map((w) => w.id)).not.toContain(webhook.id);
    // There is no field to read a secret back.
    expect(codeOf(await api(`{ webhooks { id secret } }`, {}, a.apiKey))).toBe("BAD_USER_INPUT");

    const del = `mutation ($id: ID!) { deleteWebhook(id: $id) }`;
    const foreign = await api(del, { id: webhook.id }, b.apiKey);
    const unknown = await api(del, { id: newId("whk") }, b.apiKey);
    expect(codeOf(foreign)).toBe("NOT_FOUND");
    expect(foreign.errors?.[0]?.message).toBe(unknown.errors?.[0]?.message);
    expect((await api<{ deleteWebhook: boolean }>(del, { id: webhook.id }, a.apiKey)).data?.deleteWebhook).toBe(true);
    expect(codeOf(await api(del, { id: webhook.id }, a.apiKey))).toBe("NOT_FOUND");
    expect((await listWebhooks(a.apiKey)).map((w) => w.id)).not.toContain(webhook.id);
  });

  it("refuses bad filters and URLs, and keys without the manage scope", async () => {
    for (const [url, events] of [
      [`${receiver.url}/x`, []],
      [`${receiver.url}/x`, ["task.started"]],
      [`${receiver.url}/x`, ["TASK.SUCCEEDED"]],
      ["ftp://example.com/x", ["*"]],
      ["not a url", ["*"]],
    ] as const) {
      expect(codeOf(await createWebhook(a.apiKey, url, [...events])), `${url} ${JSON.stringify(events)}`).toBe("BAD_USER_INPUT");
    }
    const readKey = await api<{ createApiKey: { secret: string } }>(`mutation { createApiKey(name: "ro", scopes: ["read"]) { secret } }`, {}, a.apiKey);
    const ro = readKey.data!.createApiKey.secret;
    expect(codeOf(await createWebhook(ro, `${receiver.url}/x`, ["*"]))).toBe("FORBIDDEN");
    expect(codeOf(await api(`{ webhooks { id } }`, {}, ro))).toBeUndefined();
  });

  it("delivers a signed task.succeeded envelope that an independent verifier accepts, and logs the delivery", async () => {
    const created = await createWebhook(a.apiKey, `${receiver.url}/events`, ["task.succeeded"]);
    const { webhook, secret } = created.data!.createWebhook;
    const taskId = await runTask(a.apiKey);

    const request = await waitFor("the delivery", () => receiver.requests.find((r) => r.path === "/events" && (r.json as { data?: { task?: { id?: string } } })?.data?.task?.id === taskId), 30_000);
    expect(verifiedBy(secret, request.headers, request.body)).toBe(true);
    expect(verifiedBy(secret, request.headers, `${request.body} `)).toBe(false);
    expect(request.json).toMatchObject({ type: "task.succeeded", data: { task: { id: taskId, status: "SUCCEEDED", result: { ok: true } } } });

    const log = await waitFor("DELIVERED in the log", async () => {
      const rows = (await deliveries(a.apiKey, webhook.id)).data?.webhookDeliveries ?? [];
      return rows[0]?.status === "DELIVERED" ? rows : null;
    }, 15_000);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ id: request.headers["webhook-id"], webhookId: webhook.id, event: "task.succeeded", taskId, attempts: 1, lastResponseCode: 204, lastError: null });

    // Another tenant cannot read this endpoint's log: NOT_FOUND, exactly like an unknown id.
    const foreign = await deliveries(b.apiKey, webhook.id);
    const unknown = await deliveries(b.apiKey, newId("whk"));
    expect(codeOf(foreign)).toBe("NOT_FOUND");
    expect(foreign.errors?.[0]?.message).toBe(unknown.errors?.[0]?.message);
    expect((await deliveries(b.apiKey, null)).data?.webhookDeliveries).toEqual([]);
  });

  it("disables an endpoint that answers 410 Gone, and the tenant can see why", async () => {
    const created = await createWebhook(a.apiKey, `${receiver.url}/gone`, ["*"]);
    const { webhook } = created.data!.createWebhook;
    await runTask(a.apiKey);
    const hook = await waitFor("the endpoint disabled", async () => (await listWebhooks(a.apiKey)).find((w) => w.id === webhook.id && !w.enabled), 30_000);
    expect(hook).toMatchObject({ enabled: false, disabledReason: "endpoint answered 410 Gone", failureStreak: 1 });
    const log = (await deliveries(a.apiKey, webhook.id)).data?.webhookDeliveries ?? [];
    expect(log[0]).toMatchObject({ status: "FAILED", lastResponseCode: 410, attempts: 1 });
  });
});

describe("updateWebhook", () => {
  it("re-enables an endpoint disabled by a 410 at a new URL, clearing the reason and the streak, and delivers signed with the same secret", async () => {
    const created = await createWebhook(a.apiKey, `${receiver.url}/gone`, ["*"]);
    const { webhook, secret } = created.data!.createWebhook;
    await runTask(a.apiKey);
    await waitFor("the endpoint disabled", async () => (await listWebhooks(a.apiKey)).find((w) => w.id === webhook.id && !w.enabled), 30_000);

    const res = await updateWebhook(a.apiKey, webhook.id, { url: `${receiver.url}/moved`, events: ["task.succeeded"], enabled: true });
    expect(res.errors).toBeUndefined();
    expect(res.data?.updateWebhook).toMatchObject({ id: webhook.id, url: `${receiver.url}/moved`, events: ["task.succeeded"], enabled: true, disabledReason: null, failureStreak: 0 });
    expect((await listWebhooks(a.apiKey)).find((w) => w.id === webhook.id)).toEqual(res.data?.updateWebhook);

    const taskId = await runTask(a.apiKey);
    const request = await waitFor("the delivery at the new URL", () => receiver.requests.find((r) => r.path === "/moved" && (r.json as { data?: { task?: { id?: string } } })?.data?.task?.id === taskId), 30_000);
    expect(verifiedBy(secret, request.headers, request.body)).toBe(true);
  });

  it("clears the streak of an endpoint disabled after consecutive failures, and keeps what the input leaves out", async () => {
    const { webhook } = (await createWebhook(a.apiKey, `${receiver.url}/streak`, ["task.dead", "task.succeeded"])).data!.createWebhook;
    await tdb.db.pool.query(`UPDATE webhooks SET enabled = false, failure_streak = 20, disabled_reason = 'disabled after 20 consecutive failed delivery attempts' WHERE id = $1`, [webhook.id]);
    const enabled = await updateWebhook(a.apiKey, webhook.id, { enabled: true, url: null });
    expect(enabled.data?.updateWebhook).toMatchObject({ url: `${receiver.url}/streak`, events: ["task.dead", "task.succeeded"], enabled: true, disabledReason: null, failureStreak: 0 });

    // Already enabled: true changes nothing, the streak included.
    await tdb.db.pool.query(`UPDATE webhooks SET failure_streak = 3 WHERE id = $1`, [webhook.id]);
    expect((await updateWebhook(a.apiKey, webhook.id, { enabled: true })).data?.updateWebhook).toMatchObject({ enabled: true, failureStreak: 3 });
    expect((await updateWebhook(a.apiKey, webhook.id, {})).data?.updateWebhook).toMatchObject({ url: `${receiver.url}/streak`, enabled: true, failureStreak: 3 });
  });

  it("disables at the tenant's word, saying so, and keeps the notifier's reason on an endpoint it disabled", async () => {
    const { webhook } = (await createWebhook(a.apiKey, `${receiver.url}/pause`, ["*"])).data!.createWebhook;
    expect((await updateWebhook(a.apiKey, webhook.id, { enabled: false })).data?.updateWebhook).toMatchObject({ enabled: false, disabledReason: "disabled by the tenant" });
    expect((await updateWebhook(a.apiKey, webhook.id, { enabled: true })).data?.updateWebhook).toMatchObject({ enabled: true, disabledReason: null });

    await tdb.db.pool.query(`UPDATE webhooks SET enabled = false, disabled_reason = 'endpoint answered 410 Gone' WHERE id = $1`, [webhook.id]);
    expect((await updateWebhook(a.apiKey, webhook.id, { enabled: false })).data?.updateWebhook).toMatchObject({ enabled: false, disabledReason: "endpoint answered 410 Gone" });
  });

  it("sends the retries of deliveries still pending to a new URL", async () => {
    const { webhook } = (await createWebhook(a.apiKey, `${receiver.url}/old`, ["*"])).data!.createWebhook;
    const pending = newId("dlv");
    await tdb.db.pool.query(
      `INSERT INTO webhook_deliveries (id, tenant_id, webhook_id, url, event, body, status, next_attempt_at)
       VALUES ($1, $2, $3, $4, 'task.succeeded', '{}', 'PENDING', now() + interval '1 hour')`,
      [pending, a.tenantId, webhook.id, `${receiver.url}/old`],
    );
    expect((await updateWebhook(a.apiKey, webhook.id, { url: `${receiver.url}/new` })).errors).toBeUndefined();
    const row = await tdb.db.pool.query<{ url: string }>(`SELECT url FROM webhook_deliveries WHERE id = $1`, [pending]);
    expect(row.rows[0]?.url).toBe(`${receiver.url}/new`);
    await tdb.db.pool.query(`DELETE FROM webhook_deliveries WHERE id = $1`, [pending]);
  });

  it("is NOT_FOUND for another tenant's, an unknown and a deleted endpoint, and changes nothing of A's", async () => {
    const { webhook } = (await createWebhook(a.apiKey, `${receiver.url}/mine`, ["task.dead"])).data!.createWebhook;
    await updateWebhook(a.apiKey, webhook.id, { enabled: false });
    const before = (await listWebhooks(a.apiKey)).find((w) => w.id === webhook.id);

    const foreign = await updateWebhook(b.apiKey, webhook.id, { enabled: true, url: `${receiver.url}/theirs`, events: ["*"] });
    const unknown = await updateWebhook(b.apiKey, newId("whk"), { enabled: true, url: `${receiver.url}/theirs`, events: ["*"] });
    expect(codeOf(foreign)).toBe("NOT_FOUND");
    expect(foreign.errors?.[0]?.message).toBe(unknown.errors?.[0]?.message);
    expect(codeOf(await updateWebhook(b.apiKey, "whk_nonsense", { enabled: true }))).toBe("NOT_FOUND");
    expect((await listWebhooks(a.apiKey)).find((w) => w.id === webhook.id)).toEqual(before);

    await api(`mutation ($id: ID!) { deleteWebhook(id: $id) }`, { id: webhook.id }, a.apiKey);
    expect(codeOf(await updateWebhook(a.apiKey, webhook.id, { enabled: true }))).toBe("NOT_FOUND");
  });

  it("refuses bad input naming the field, private URLs, and keys without the manage scope", async () => {
    const { webhook } = (await createWebhook(a.apiKey, `${receiver.url}/strict`, ["*"])).data!.createWebhook;
    for (const [input, path] of [
      [{ events: [] }, "events"],
      [{ events: ["task.started"] }, "events.0"],
      [{ url: "ftp://example.com/x" }, "url"],
      [{ url: "not a url" }, "url"],
    ] as const) {
      const res = await updateWebhook(a.apiKey, webhook.id, input);
      expect(codeOf(res), JSON.stringify(input)).toBe("BAD_USER_INPUT");
      expect((res.errors?.[0]?.extensions?.fieldErrors as { path: string }[])[0]?.path, JSON.stringify(input)).toBe(path);
    }
    const privateUrl = await updateWebhook(a.apiKey, webhook.id, { url: "http://metadata.example.test/hook" }, strict);
    expect(codeOf(privateUrl)).toBe("BAD_USER_INPUT");
    expect(privateUrl.errors?.[0]?.message).toMatch(/^input\.url refused: /);

    const readKey = await api<{ createApiKey: { secret: string } }>(`mutation { createApiKey(name: "ro", scopes: ["read"]) { secret } }`, {}, a.apiKey);
    const forbidden = await updateWebhook(readKey.data!.createApiKey.secret, webhook.id, { enabled: false });
    expect(codeOf(forbidden)).toBe("FORBIDDEN");
    expect((await listWebhooks(a.apiKey)).find((w) => w.id === webhook.id)).toMatchObject({ url: `${receiver.url}/strict`, events: ["*"], enabled: true });
  });
});

describe("webhook URLs with ALLOW_PRIVATE_TARGETS=0", () => {
  const refused = [
    "http://127.0.0.1/hook",
    "http://127.1.2.3:8080/hook",
    "http://[::1]/hook",
    "http://[::ffff:127.0.0.1]/hook",
    "http://169.254.169.254/latest/meta-data/",
    "http://10.0.0.8/hook",
    "http://localhost/hook",
    "http://localhost./hook",
    "http://LOCALHOST:4000/hook",
    "http://api.localhost/hook",
    "http://2130706433/hook",
    "http://0x7f.1/hook",
    "http://loopback.example.test/hook",
    "http://metadata.example.test/hook",
    "http://v6-loopback.example.test/hook",
    "http://mixed.example.test/hook",
  ];

  it.each(refused)("refuses %s", async (url) => {
    const res = await createWebhook(a.apiKey, url, ["*"], strict);
    expect(codeOf(res)).toBe("BAD_USER_INPUT");
    expect(res.errors?.[0]?.message).toMatch(/^input\.url refused: /);
  });

  it("accepts a public host, so the refusals are about the addresses", async () => {
    const res = await createWebhook(b.apiKey, "https://hooks.example.test/tasklane", ["*"], strict);
    expect(res.errors).toBeUndefined();
  });
});
