/**
 * The notifier as production runs it (a child process on the built
 * dist/bundle/main.js) against a real Postgres and a real HTTP receiver: terminal
 * task events reach webhooks and callbacks, signed, retried and disabled as
 * the contract says.
 */
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver, type ReceivedRequest } from "../helpers/http-receiver.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { freePort } from "../helpers/free-port.js";
import { addWebhook, deliveriesOf, finishTask, seedNotifierTenant, verifyStandardWebhook } from "./notifier-harness.js";

let tdb: TestDatabase;
let receiver: HttpReceiver;
let notifier: AppProcess;
let metricsUrl: string;
/** Per-path answers; paths are unique per test so tests cannot see each other's traffic. */
const routes = new Map<string, (req: ReceivedRequest, res: ServerResponse) => void>();
const hits = (path: string) => receiver.requests.filter((r) => r.path === path);
const ok = (res: ServerResponse) => res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');

beforeAll(async () => {
  tdb = await createTestDatabase("notif");
  receiver = await startReceiver((req, res) => (routes.get(req.path) ?? ((_r, s) => ok(s)))(req, res));
  const port = await freePort();
  metricsUrl = `http://127.0.0.1:${port}`;
  notifier = startApp("notifier", {
    DATABASE_URL: tdb.url,
    ALLOW_PRIVATE_TARGETS: "1",
    WEBHOOK_RETRY_SCHEDULE: "1,1,1",
    METRICS_PORT: String(port),
    // Out of every test's reach: each delivery here is fanned out on Postgres's wake-up (LISTEN), not a poll.
    NOTIFIER_OUTBOX_POLL_MS: "600000",
    // Likewise deliveries: a new one is claimed when the fan-out makes it, a retry when it falls due.
    NOTIFIER_DELIVERY_POLL_MS: "600000",
  });
  await waitFor("notifier /healthz", async () => (await fetch(`${metricsUrl}/healthz`)).status === 200, 30_000, 100);
});

afterAll(async () => {
  // SIGTERM must drain and exit cleanly; a non-zero code is a bug worth failing on.
  const code = await notifier?.stop();
  await receiver?.close();
  await tdb?.drop();
  expect(code, notifier?.output()).toBe(0);
});

describe("notifier delivery", () => {
  it("fans a task's end out on the commit's wake-up, with the fallback poll ten minutes away", async () => {
    const t = await seedNotifierTenant(tdb.db);
    await addWebhook(tdb.db, t.tenantId, `${receiver.url}/woken`, ["*"]);
    const startedAt = Date.now();
    const taskId = await finishTask(tdb.db, t, "succeed");
    const [req] = await waitFor("the delivery", () => (hits("/woken").length ? hits("/woken") : null), 10_000);
    expect((req?.json as { data: { task: { id: string } } }).data.task.id).toBe(taskId);
    expect(Date.now() - startedAt).toBeLessThan(10_000);
  });

  it("opens its wake-up session again when Postgres drops it, and fans out what was committed meanwhile", async () => {
    const dropped = await tdb.db.pool.query<{ ok: boolean }>(
      "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = 'tasklane-outbox-wakeups' AND datname = current_database()",
    );
    expect(dropped.rows.map((r) => r.ok)).toEqual([true]);
    const t = await seedNotifierTenant(tdb.db);
    await addWebhook(tdb.db, t.tenantId, `${receiver.url}/rewoken`, ["*"]);
    const taskId = await finishTask(tdb.db, t, "succeed"); // most likely while no session listens
    const [req] = await waitFor("the delivery", () => (hits("/rewoken").length ? hits("/rewoken") : null), 10_000);
    expect((req?.json as { data: { task: { id: string } } }).data.task.id).toBe(taskId);
    await waitFor(
      "a listening session again",
      async () => (await tdb.db.pool.query("SELECT 1 FROM pg_stat_activity WHERE application_name = 'tasklane-outbox-wakeups' AND datname = current_database()")).rowCount === 1,
      10_000,
    );
  });

  it("delivers a success once, signed with the webhook's own secret, in the contract's envelope", async () => {
    const t = await seedNotifierTenant(tdb.db);
    const hook = await addWebhook(tdb.db, t.tenantId, `${receiver.url}/ok`, ["*"]);
    const taskId = await finishTask(tdb.db, t, "succeed");

    const [req] = await waitFor("the delivery", () => (hits("/ok").length ? hits("/ok") : null));
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(req?.headers["user-agent"]).toMatch(/Tasklane/);
    expect(verifyStandardWebhook(hook.secret, req?.headers ?? {}, req?.body ?? "")).toBe(true);
    expect(verifyStandardWebhook(t.secret, req?.headers ?? {}, req?.body ?? "")).toBe(false);
    expect(req?.json).toMatchObject({
      type: "task.succeeded",
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: {
        task: {
          id: taskId, type: "report.build", queue: "default", status: "SUCCEEDED", priority: "NORMAL",
          attempts: 1, maxAttempts: 1, result: { rows: 3 }, lastError: null, cancelRequested: false,
          workflowId: null, scheduleId: null, idempotencyKey: null, orderingKey: null,
          completedAt: expect.stringMatching(/\.\d{3}Z$/),
        },
      },
    });

    const [row] = await waitFor("DELIVERED", async () => {
      const rows = await deliveriesOf(tdb.db, taskId);
      return rows[0]?.status === "DELIVERED" ? rows : null;
    });
    expect(row).toMatchObject({ id: req?.headers["webhook-id"], webhook_id: hook.id, attempts: 1, last_response_code: 200 });
    expect(row?.body).toBe(req?.body);
    await new Promise((r) => setTimeout(r, 500));
    expect(hits("/ok")).toHaveLength(1);
    const outbox = await tdb.db.pool.query("SELECT count(*)::int AS n FROM outbox WHERE kind = 'NOTIFY'");
    expect(outbox.rows[0].n).toBe(0);
  });

  it("retries a failing receiver with the same webhook-id and body until it answers 2xx", async () => {
    const t = await seedNotifierTenant(tdb.db);
    const hook = await addWebhook(tdb.db, t.tenantId, `${receiver.url}/flaky`, ["task.succeeded"]);
    routes.set("/flaky", (_req, res) => (hits("/flaky").length <= 3 ? res.writeHead(500).end("down") : ok(res)));
    const taskId = await finishTask(tdb.db, t, "succeed");

    const [row] = await waitFor("DELIVERED after retries", async () => {
      const rows = await deliveriesOf(tdb.db, taskId);
      return rows[0]?.status === "DELIVERED" ? rows : null;
    }, 20_000);
    const reqs = hits("/flaky");
    expect(reqs).toHaveLength(4);
    expect(new Set(reqs.map((r) => r.headers["webhook-id"]))).toEqual(new Set([row?.id]));
    expect(new Set(reqs.map((r) => r.body)).size).toBe(1);
    for (const r of reqs) expect(verifyStandardWebhook(hook.secret, r.headers, r.body)).toBe(true);
    // WEBHOOK_RETRY_SCHEDULE=1,1,1 with ±20 % jitter: each retry 0.8–1.2 s after the previous answer.
    // Each retry is claimed when it falls due (the delivery poll is ten minutes away).
    for (let i = 1; i < reqs.length; i++) expect((reqs[i]?.at ?? 0) - (reqs[i - 1]?.at ?? 0)).toBeGreaterThanOrEqual(700);
    expect(row).toMatchObject({ attempts: 4, last_response_code: 200 });
    const streak = await tdb.db.pool.query("SELECT failure_streak FROM webhooks WHERE id = $1", [hook.id]);
    expect(streak.rows[0].failure_streak).toBe(0);
  });

  it("a 410 fails the delivery at once and disables the webhook, failing its deliveries waiting for a retry", async () => {
    const t = await seedNotifierTenant(tdb.db);
    const hook = await addWebhook(tdb.db, t.tenantId, `${receiver.url}/gone`, ["*"]);
    routes.set("/gone", (_req, res) => res.writeHead(410).end());
    // Another event's delivery waiting for its retry, and one in flight on another notifier's claim.
    await tdb.db.pool.query(
      `INSERT INTO webhook_deliveries (id, tenant_id, webhook_id, url, event, body, attempts, next_attempt_at, locked_until)
       VALUES ('dlv_gone_waiting', $1, $2, $3, 'task.succeeded', '{}', 1, now() + interval '1 hour', NULL),
              ('dlv_gone_inflight', $1, $2, $3, 'task.succeeded', '{}', 0, now() - interval '1 second', now() + interval '1 minute')`,
      [t.tenantId, hook.id, `${receiver.url}/gone`],
    );
    const taskId = await finishTask(tdb.db, t, "dead");

    const [row] = await waitFor("FAILED", async () => {
      const rows = await deliveriesOf(tdb.db, taskId);
      return rows[0]?.status === "FAILED" ? rows : null;
    });
    expect(row).toMatchObject({ event: "task.dead", attempts: 1, last_response_code: 410 });
    const w = await tdb.db.pool.query("SELECT enabled, disabled_reason FROM webhooks WHERE id = $1", [hook.id]);
    expect(w.rows[0]).toEqual({ enabled: false, disabled_reason: "endpoint answered 410 Gone" });
    const others = await tdb.db.pool.query("SELECT id, status, last_error FROM webhook_deliveries WHERE id LIKE 'dlv_gone_%' ORDER BY id");
    expect(others.rows).toEqual([
      { id: "dlv_gone_inflight", status: "PENDING", last_error: null },
      { id: "dlv_gone_waiting", status: "FAILED", last_error: "webhook is disabled: endpoint answered 410 Gone" },
    ]);
    await new Promise((r) => setTimeout(r, 1500));
    expect(hits("/gone")).toHaveLength(1);
  });

  it("respects event filters: a task.dead webhook gets nothing for a success", async () => {
    const t = await seedNotifierTenant(tdb.db);
    await addWebhook(tdb.db, t.tenantId, `${receiver.url}/dead-only`, ["task.dead"]);
    const succeeded = await finishTask(tdb.db, t, "succeed");
    const dead = await finishTask(tdb.db, t, "dead");

    const [req] = await waitFor("the task.dead delivery", () => (hits("/dead-only").length ? hits("/dead-only") : null));
    expect(req?.json).toMatchObject({ type: "task.dead", data: { task: { id: dead, status: "DEAD", lastError: "boom" } } });
    expect(await deliveriesOf(tdb.db, succeeded)).toEqual([]);
    await new Promise((r) => setTimeout(r, 500));
    expect(hits("/dead-only")).toHaveLength(1);
  });

  it("sends a task's callbackUrl its event signed with the tenant secret (both secrets during a rotation)", async () => {
    const previous = "whsec_" + Buffer.from("an older tenant secret, 32 bytes").toString("base64");
    const t = await seedNotifierTenant(tdb.db, previous);
    const taskId = await finishTask(tdb.db, t, "cancel", `${receiver.url}/callback`);

    const [req] = await waitFor("the callback", () => (hits("/callback").length ? hits("/callback") : null));
    expect(req?.json).toMatchObject({ type: "task.cancelled", data: { task: { id: taskId, status: "CANCELLED" } } });
    expect(verifyStandardWebhook(t.secret, req?.headers ?? {}, req?.body ?? "")).toBe(true);
    expect(verifyStandardWebhook(previous, req?.headers ?? {}, req?.body ?? "")).toBe(true);
    expect(String(req?.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    const [row] = await waitFor("DELIVERED", async () => {
      const rows = await deliveriesOf(tdb.db, taskId);
      return rows[0]?.status === "DELIVERED" ? rows : null;
    });
    expect(row).toMatchObject({ webhook_id: null, url: `${receiver.url}/callback`, event: "task.cancelled" });
  });

  it("disables a webhook after 20 consecutive failed attempts and says why; exhausted deliveries are FAILED", async () => {
    const t = await seedNotifierTenant(tdb.db);
    const hook = await addWebhook(tdb.db, t.tenantId, `${receiver.url}/broken`, ["*"]);
    routes.set("/broken", (_req, res) => res.writeHead(503).end("maintenance"));
    // Five deliveries x four attempts (schedule 1,1,1) = the 20 failed attempts of the threshold.
    const tasks: string[] = [];
    for (let i = 0; i < 5; i++) tasks.push(await finishTask(tdb.db, t, "succeed"));

    const w = await waitFor("webhook disabled", async () => {
      const res = await tdb.db.pool.query("SELECT enabled, disabled_reason, failure_streak FROM webhooks WHERE id = $1", [hook.id]);
      return res.rows[0]?.enabled === false ? res.rows[0] : null;
    }, 30_000);
    expect(w.disabled_reason).toMatch(/^disabled after 20 consecutive failed delivery attempts \(last: HTTP 503: maintenance\)$/);
    expect(w.failure_streak).toBe(20);
    const rows = await waitFor("all deliveries settled", async () => {
      const all = (await Promise.all(tasks.map((id) => deliveriesOf(tdb.db, id)))).flat();
      return all.every((d) => d.status === "FAILED") ? all : null;
    }, 15_000);
    expect(rows).toHaveLength(5);
    expect(rows.every((d) => d.attempts === 4 && d.last_response_code === 503)).toBe(true);
    expect(hits("/broken")).toHaveLength(20);
  });

  it("keeps at most 4 deliveries in flight to one endpoint", async () => {
    const t = await seedNotifierTenant(tdb.db);
    await addWebhook(tdb.db, t.tenantId, `${receiver.url}/slow-endpoint`, ["*"]);
    let active = 0;
    let peak = 0;
    routes.set("/slow-endpoint", (_req, res) => {
      peak = Math.max(peak, ++active);
      setTimeout(() => {
        active--;
        ok(res);
      }, 1000);
    });
    const tasks: string[] = [];
    for (let i = 0; i < 7; i++) tasks.push(await finishTask(tdb.db, t, "succeed"));

    await waitFor("all delivered", async () => {
      const all = (await Promise.all(tasks.map((id) => deliveriesOf(tdb.db, id)))).flat();
      return all.length === 7 && all.every((d) => d.status === "DELIVERED");
    }, 20_000);
    expect(peak).toBe(4);
    expect(hits("/slow-endpoint")).toHaveLength(7);
  });

  it("serves /metrics with deliveries by outcome", async () => {
    const text = await (await fetch(`${metricsUrl}/metrics`)).text();
    expect(text).toMatch(/tasklane_notifier_deliveries_total\{outcome="delivered",app="notifier"\} \d+/);
    expect(text).toMatch(/tasklane_notifier_deliveries_total\{outcome="gone",app="notifier"\} 1/);
    expect(text).toMatch(/tasklane_notifier_deliveries_total\{outcome="retry",app="notifier"\} \d+/);
  });
});
