/**
 * rotateWebhookSecret, as Svix's and Stripe's endpoint secret roll: the new
 * secret signs from the next attempt, the one it replaced keeps signing beside
 * it for 24 h (two v1 signatures in webhook-signature), and a second rotation
 * ends the older one at once. Receivers verify with the official
 * `standardwebhooks` package. The gateway runs in process, the notifier as a
 * process on its dist/bundle/main.js; real Postgres and Redis, receiver on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor, type AppProcess } from "../helpers/app-process.js";
import { StandardWebhook, startTestNotifier } from "../helpers/test-notifier.js";
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

const ROTATE = `mutation ($id: ID!) { rotateWebhookSecret(id: $id) { webhook { id previousSecretExpiresAt } secret } }`;

let tdb: TestDatabase;
let redis: TestRedis;
let receiver: HttpReceiver;
let gateway: StartedGateway;
let notifier: AppProcess;
let a: CreatedTenant;
let b: CreatedTenant;

const api = <T>(query: string, variables: Record<string, unknown>, key: string) => gql<T>(gateway.url, query, variables, key);

/** Whether the official verifier accepts the request with `secret`. */
function verifies(secret: string, req: ReceivedRequest): boolean {
  const headers = Object.fromEntries(["webhook-id", "webhook-timestamp", "webhook-signature"].map((h) => [h, String(req.headers[h] ?? "")]));
  try {
    new StandardWebhook(secret).verify(req.body, headers);
    return true;
  } catch {
    return false;
  }
}

async function rotate(key: string, id: string) {
  return api<{ rotateWebhookSecret: { webhook: { id: string; previousSecretExpiresAt: string | null }; secret: string } }>(ROTATE, { id }, key);
}

/** Runs a task to success and answers the webhook request its delivery made to `path`. */
async function deliveredTo(path: string): Promise<ReceivedRequest> {
  const taskId = await runPullTask(gateway.url, a.apiKey, { type: "hook.rotate", workerId: "rotate-test" });
  return waitFor(`the delivery of ${taskId}`, () => receiver.requests.find((r) => r.path === path && (r.json as { data?: { task?: { id?: string } } })?.data?.task?.id === taskId) ?? null, 20_000);
}

beforeAll(async () => {
  tdb = await createTestDatabase("whrotate");
  redis = createTestRedis();
  receiver = await startReceiver();
  gateway = await startGateway({ databaseUrl: tdb.url, redis, env: { ALLOW_PRIVATE_TARGETS: "1" } });
  notifier = startTestNotifier(tdb, redis, { WEBHOOK_RETRY_SCHEDULE: "1" });
  a = await createTenant(gateway);
  b = await createTenant(gateway);
});

afterAll(async () => {
  const code = await notifier?.stop();
  await gateway?.close();
  await receiver?.close();
  await redis?.cleanup();
  await tdb?.drop();
  expect(code, notifier?.output()).toBe(0);
});

describe("rotateWebhookSecret", () => {
  it("signs with the new and the replaced secret for 24 h; a second rotation ends the oldest at once", async () => {
    const created = await api<{ createWebhook: { webhook: { id: string }; secret: string } }>(
      `mutation ($u: String!) { createWebhook(input: { url: $u, events: ["*"] }) { webhook { id } secret } }`,
      { u: `${receiver.url}/rotate` },
      a.apiKey,
    );
    const id = created.data?.createWebhook.webhook.id ?? "";
    const first = created.data?.createWebhook.secret ?? "";
    const before = await deliveredTo("/rotate");
    expect(verifies(first, before)).toBe(true);
    expect(String(before.headers["webhook-signature"]).split(" ")).toHaveLength(1);

    const r1 = await rotate(a.apiKey, id);
    expect(r1.errors).toBeUndefined();
    const second = r1.data?.rotateWebhookSecret.secret ?? "";
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    const until = Date.parse(r1.data?.rotateWebhookSecret.webhook.previousSecretExpiresAt ?? "");
    expect(until - Date.now()).toBeGreaterThan(23.9 * 3600_000);
    expect(until - Date.now()).toBeLessThanOrEqual(24 * 3600_000);
    const during = await deliveredTo("/rotate");
    // A receiver that has not switched yet and one that has both accept it.
    expect([verifies(second, during), verifies(first, during)]).toEqual([true, true]);
    expect(String(during.headers["webhook-signature"]).split(" ")).toHaveLength(2);

    // Rotating again (a leaked secret): the first secret no longer signs anything.
    const third = (await rotate(a.apiKey, id)).data?.rotateWebhookSecret.secret ?? "";
    const after = await deliveredTo("/rotate");
    expect([verifies(third, after), verifies(second, after), verifies(first, after)]).toEqual([true, true, false]);

    // Past the grace period only the current secret signs, and the API says none other does.
    await tdb.db.pool.query("UPDATE webhooks SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1", [id]);
    const expired = await deliveredTo("/rotate");
    expect([verifies(third, expired), verifies(second, expired)]).toEqual([true, false]);
    const listed = await api<{ webhooks: { id: string; previousSecretExpiresAt: string | null }[] }>(`{ webhooks { id previousSecretExpiresAt } }`, {}, a.apiKey);
    expect(listed.data?.webhooks.find((w) => w.id === id)?.previousSecretExpiresAt).toBeNull();
  }, 60_000);

  it("another tenant's, an unknown and a deleted webhook are NOT_FOUND, and nothing changes", async () => {
    const created = await api<{ createWebhook: { webhook: { id: string } } }>(
      `mutation ($u: String!) { createWebhook(input: { url: $u, events: ["*"] }) { webhook { id } } }`,
      { u: `${receiver.url}/other` },
      a.apiKey,
    );
    const id = created.data?.createWebhook.webhook.id ?? "";
    await rotate(a.apiKey, id);
    const row = async () => (await tdb.db.pool.query("SELECT secret, previous_secret, previous_secret_expires_at FROM webhooks WHERE id = $1", [id])).rows[0];
    const held = await row();
    expect(codeOf(await rotate(b.apiKey, id))).toBe("NOT_FOUND");
    expect(codeOf(await rotate(a.apiKey, "whk_00000000000000000000000000000000"))).toBe("NOT_FOUND");
    expect(codeOf(await rotate(a.apiKey, "not-an-id"))).toBe("NOT_FOUND");
    expect(await row()).toEqual(held);

    // Deleting drops both secrets; a deleted webhook cannot be rotated back into signing.
    expect((await api(`mutation ($id: ID!) { deleteWebhook(id: $id) }`, { id }, a.apiKey)).errors).toBeUndefined();
    expect(await row()).toMatchObject({ secret: "", previous_secret: null, previous_secret_expires_at: null });
    expect(codeOf(await rotate(a.apiKey, id))).toBe("NOT_FOUND");
    expect(await row()).toMatchObject({ secret: "", previous_secret: null });
  });
});
