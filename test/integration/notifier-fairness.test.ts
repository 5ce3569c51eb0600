/**
 * Fairness between tenants in the notifier (a child process on the built
 * dist/bundle/main.js, real Postgres, receivers on 127.0.0.1): one tenant's backlog
 * to a slow receiver, or its many URLs at one, must not hold back another
 * tenant's webhook. The slow receiver holds every request until the test lets
 * go, so "slow" is as slow as the test needs and nothing depends on timing.
 */
import type { ServerResponse } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { freePort } from "../helpers/free-port.js";
import { addWebhook, deliveriesOf, finishTask, seedNotifierTenant } from "./notifier-harness.js";

/** B's webhook must arrive within this while A keeps the slow receiver busy (it took 16–60 s). */
const FAIR_MS = 5_000;

let tdb: TestDatabase;
/** Holds every request; a test's afterEach answers them all. */
let slow: HttpReceiver;
let fast: HttpReceiver;
let notifier: AppProcess;
const held: ServerResponse[] = [];
/** Requests the slow receiver holds right now, and the most it ever held at once. */
let holding = 0;
let peak = 0;

function release(): void {
  for (const res of held.splice(0)) if (!res.destroyed) res.writeHead(200).end();
  holding = 0;
}

beforeAll(async () => {
  tdb = await createTestDatabase("notiffair");
  slow = await startReceiver((_req, res) => {
    held.push(res);
    peak = Math.max(peak, ++holding);
    res.on("close", () => (holding = Math.max(0, holding - 1)));
  });
  fast = await startReceiver();
  const port = await freePort();
  notifier = startApp("notifier", {
    DATABASE_URL: tdb.url,
    ALLOW_PRIVATE_TARGETS: "1",
    // A held request times out after 10 s and comes back a minute later: out of every test's reach.
    WEBHOOK_RETRY_SCHEDULE: "60",
    METRICS_PORT: String(port),
    NOTIFIER_OUTBOX_POLL_MS: "600000",
    // The deep backlog is written straight into webhook_deliveries, with no wake-up: a poll finds it.
    NOTIFIER_DELIVERY_POLL_MS: "200",
  });
  await waitFor("notifier /healthz", async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200, 30_000, 100);
});

afterEach(async () => {
  // Nothing of A's is left to send: its backlog is settled and its held requests answered.
  await tdb.db.pool.query("UPDATE webhook_deliveries SET status = 'FAILED' WHERE status = 'PENDING'");
  release();
  await new Promise((r) => setTimeout(r, 300));
  release();
  peak = 0;
});

afterAll(async () => {
  release();
  const code = await notifier?.stop();
  await slow?.close();
  await fast?.close();
  await tdb?.drop();
  expect(code, notifier?.output()).toBe(0);
});

/** Finishes one task of a fresh tenant B with a webhook to the fast receiver; answers how long until B's webhook arrived. */
async function quietTenantLatency(path: string): Promise<number> {
  const b = await seedNotifierTenant(tdb.db);
  await addWebhook(tdb.db, b.tenantId, `${fast.url}${path}`, ["*"]);
  const started = Date.now();
  const taskId = await finishTask(tdb.db, b, "succeed");
  const arrived = await waitFor(`B's webhook ${path}`, () => fast.requests.find((r) => r.path === path), FAIR_MS + 5_000, 10).catch(() => null);
  const ms = (arrived?.at ?? Date.now()) - started;
  expect(arrived, `B's webhook did not arrive within ${FAIR_MS + 5_000} ms`).not.toBeNull();
  const [row] = await waitFor("B's delivery DELIVERED", async () => {
    const rows = await deliveriesOf(tdb.db, taskId);
    return rows[0]?.status === "DELIVERED" ? rows : null;
  }, 5_000);
  expect(row?.last_response_code).toBe(200);
  return ms;
}

describe("notifier fairness between tenants", () => {
  it("delivers B's webhook at once while A has a 3,000-deep backlog to one slow receiver", async () => {
    const a = await seedNotifierTenant(tdb.db);
    const hook = await addWebhook(tdb.db, a.tenantId, `${slow.url}/deep`, ["*"]);
    // Older than anything B makes: the oldest 1,000 due rows are all A's.
    await tdb.db.pool.query(
      `INSERT INTO webhook_deliveries (id, tenant_id, webhook_id, url, event, body, next_attempt_at)
       SELECT 'dlv_deep' || g, $1, $2, $3, 'task.succeeded', '{}', now() - interval '1 hour' + g * interval '1 ms'
       FROM generate_series(1, 3000) g`,
      [a.tenantId, hook.id, `${slow.url}/deep`],
    );
    await waitFor("A's deliveries held by the slow receiver", () => holding >= 4, 10_000);
    const ms = await quietTenantLatency("/after-deep");
    expect(ms).toBeLessThan(FAIR_MS);
    expect(peak).toBe(4);
  });

  it("delivers B's webhook at once while A's 40 webhooks at one slow receiver have 80 deliveries due", async () => {
    const a = await seedNotifierTenant(tdb.db);
    for (let i = 0; i < 40; i++) await addWebhook(tdb.db, a.tenantId, `${slow.url}/many/a${i}`, ["*"]);
    await finishTask(tdb.db, a, "succeed");
    await finishTask(tdb.db, a, "succeed");
    await waitFor("A's deliveries held by the slow receiver", () => holding >= 4, 10_000);
    await new Promise((r) => setTimeout(r, 500));
    const ms = await quietTenantLatency("/after-many");
    expect(ms).toBeLessThan(FAIR_MS);
    // Forty URLs at one origin share its cap of 4.
    expect(peak).toBe(4);
  });

  it("delivers B's webhook at once while ten other tenants' slow receivers hold every slot", async () => {
    // Ten tenants, five deliveries due each to the slow receiver: 4 in flight per tenant and origin
    // would be 40, so the notifier's 32 slots are all held (3 or 4 a tenant) until the requests time out.
    // All fifty become due in one statement: written tenant by tenant, on a loaded machine the first
    // eight filled every slot before the last two had any, and those two, under their owed share,
    // were rightly lent a slot each (the receiver held 34).
    const crowd = [];
    for (let i = 0; i < 10; i++) {
      const a = await seedNotifierTenant(tdb.db);
      const url = `${slow.url}/crowd${i}`;
      crowd.push({ tenantId: a.tenantId, webhookId: (await addWebhook(tdb.db, a.tenantId, url, ["*"])).id, url });
    }
    await tdb.db.pool.query(
      `INSERT INTO webhook_deliveries (id, tenant_id, webhook_id, url, event, body, next_attempt_at)
       SELECT 'dlv_crowd' || c.ord || '_' || g, c.tenant_id, c.webhook_id, c.url, 'task.succeeded', '{}', now() - interval '1 minute'
       FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS c(tenant_id, webhook_id, url, ord), generate_series(1, 5) g`,
      [crowd.map((c) => c.tenantId), crowd.map((c) => c.webhookId), crowd.map((c) => c.url)],
    );
    await waitFor("every slot held by the slow receiver", () => holding >= 32, 10_000);
    // Until its first request ends (the 10 s timeout) no slot is free: B must start on one lent to it.
    const ms = await quietTenantLatency("/after-crowd");
    expect(ms).toBeLessThan(FAIR_MS);
    // The crowd's tenants, each at or past its owed share (32 / 11 = 2), were lent nothing.
    expect(peak).toBe(32);
  });

  it("delivers a tenant's healthy webhook at once while its other webhook's 300-deep backlog waits on a slow receiver", async () => {
    const a = await seedNotifierTenant(tdb.db);
    const stuck = await addWebhook(tdb.db, a.tenantId, `${slow.url}/own-stuck`, ["task.dead"]);
    await addWebhook(tdb.db, a.tenantId, `${fast.url}/own-healthy`, ["task.succeeded"]);
    // Older than the healthy webhook's delivery: the tenant's 64 oldest due rows are all the stuck one's.
    await tdb.db.pool.query(
      `INSERT INTO webhook_deliveries (id, tenant_id, webhook_id, url, event, body, next_attempt_at)
       SELECT 'dlv_stuck' || g, $1, $2, $3, 'task.dead', '{}', now() - interval '1 hour' + g * interval '1 ms'
       FROM generate_series(1, 300) g`,
      [a.tenantId, stuck.id, `${slow.url}/own-stuck`],
    );
    await waitFor("the stuck webhook's deliveries held by the slow receiver", () => holding >= 4, 10_000);
    const started = Date.now();
    const taskId = await finishTask(tdb.db, a, "succeed");
    const arrived = await waitFor("the healthy webhook's delivery", () => fast.requests.find((r) => r.path === "/own-healthy") ?? null, FAIR_MS + 5_000, 10).catch(() => null);
    expect(arrived, `the healthy webhook's delivery did not arrive within ${FAIR_MS + 5_000} ms`).not.toBeNull();
    expect((arrived?.at ?? Date.now()) - started).toBeLessThan(FAIR_MS);
    expect((await deliveriesOf(tdb.db, taskId)).map((d) => d.url)).toEqual([`${fast.url}/own-healthy`]);
    expect(peak).toBe(4);
  });

  it("delivers B's webhook at once while A's 100 callbacks differ only by query string", async () => {
    const a = await seedNotifierTenant(tdb.db);
    for (let i = 0; i < 100; i++) await finishTask(tdb.db, a, "succeed", `${slow.url}/cb?i=${i}`);
    await waitFor("A's callbacks held by the slow receiver", () => holding >= 4, 10_000);
    await new Promise((r) => setTimeout(r, 500));
    const ms = await quietTenantLatency("/after-callbacks");
    expect(ms).toBeLessThan(FAIR_MS);
    expect(peak).toBe(4);
  });
});
