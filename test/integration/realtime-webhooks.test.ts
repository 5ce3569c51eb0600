/**
 * The webhook API end to end: createWebhook / webhooks / deleteWebhook /
 * webhookDeliveries through the gateway, a real delivery by the notifier
 * process verified with a Standard Webhooks check written here from the spec,
 * an endpoint disabled with its reason visible to the tenant, and the SSRF
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

const listWebhooks = async (key: string) => (await api<{ webhooks: WebhookView[] }>(`{ webhooks { ${WEBHOOK} } }`, {}, key)).data?.webhooks ?? [];

const deliveries = (key: string, webhookId: string | null) =>
  api<{ webhookDeliveries: DeliveryView[] }>(`query ($id: ID) { webhookDeliveries(webhookId: $id, first: 10) { ${DELIVERY} } }`, { id: webhookId }, key);

/** Submits a task to the tenant's default PULL queue and completes it as a pull worker would. */
async function runTask(key: string): Promise<string> {
  const submitted = await api<{ submitTask: { id: string } }>(`mutation { submitTask(input: { type: "hook.test", queue: "default" }) { id } }`, {}, key);
  const taskId = submitted.data?.submitTask.id;
  if (taskId === undefined) throw new Error(JSON.stringify(submitted.errors));
  const lease = await api<{ leaseTasks: { leaseToken: string; task: { id: string } }[] }>(
    `mutation { leaseTasks(queue: "default", workerId: "hook-test", max: 1) { leaseToken task { id } } }`,
    {},
    key,
  );
  const leased = lease.data?.leaseTasks[0];
  expect(leased?.task.id).toBe(taskId);
  const done = await api(`mutation ($t: ID!, $l: String!) { completeTask(taskId: $t, leaseToken: $l, result: { ok: true }) { status } }`, { t: taskId, l: leased?.leaseToken }, key);
  expect(done.errors).toBeUndefined();
  return taskId;
}

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
