/**
 * Notifier process lifecycles: a SIGKILL mid-delivery loses nothing (the
 * claim's lock runs out and another process sends it again under the same
 * webhook-id), SIGTERM finishes in-flight deliveries before exiting 0, and
 * with ALLOW_PRIVATE_TARGETS=0 nothing is ever sent to a private address.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { addWebhook, deliveriesOf, finishTask, seedNotifierTenant, verifyStandardWebhook } from "./notifier-harness.js";

let tdb: TestDatabase;
let receiver: HttpReceiver;
const running: AppProcess[] = [];

function notifier(env: Record<string, string> = {}): AppProcess {
  const app = startApp("notifier", { DATABASE_URL: tdb.url, ALLOW_PRIVATE_TARGETS: "1", WEBHOOK_RETRY_SCHEDULE: "1,1,1", ...env });
  running.push(app);
  return app;
}

const started = (app: AppProcess) => waitFor("notifier started", () => app.output().includes("notifier started"), 30_000);

beforeAll(async () => {
  tdb = await createTestDatabase("notifproc");
  receiver = await startReceiver();
});

afterEach(async () => {
  // A test must not leave a notifier behind to act on the next test's rows.
  await Promise.all(running.splice(0).map((app) => app.stop(5_000)));
});

afterAll(async () => {
  await receiver?.close();
  await tdb?.drop();
});

describe("notifier processes", () => {
  it("a delivery in flight when its notifier is SIGKILLed is completed after restart, under the same webhook-id", async () => {
    const t = await seedNotifierTenant(tdb.db);
    const hook = await addWebhook(tdb.db, t.tenantId, `${receiver.url}/slow`, ["*"]);
    // The first request is never answered (the notifier dies holding it); later ones succeed at once.
    receiver.respond((req, res) => {
      if (receiver.requests.filter((r) => r.path === "/slow").length === 1) return;
      res.writeHead(200).end();
    });
    const first = notifier();
    const taskId = await finishTask(tdb.db, t, "succeed");
    await waitFor("the first request to arrive", () => receiver.requests.length === 1, 15_000);
    first.kill("SIGKILL");
    await first.exited;

    const second = notifier();
    const [row] = await waitFor("DELIVERED after restart", async () => {
      const rows = await deliveriesOf(tdb.db, taskId);
      return rows[0]?.status === "DELIVERED" ? rows : null;
    }, 40_000);
    await second.stop();
    const reqs = receiver.requests.filter((r) => r.path === "/slow");
    expect(reqs.length).toBe(2);
    expect(reqs.map((r) => r.headers["webhook-id"])).toEqual([row?.id, row?.id]);
    for (const r of reqs) expect(verifyStandardWebhook(hook.secret, r.headers, r.body)).toBe(true);
    // The claim held until its lock (10 s timeout + 5 s margin) ran out; nobody sent it twice meanwhile.
    expect((reqs[1]?.at ?? 0) - (reqs[0]?.at ?? 0)).toBeGreaterThanOrEqual(10_000);
    // The killed attempt left no record; the one that got through is attempt 1.
    expect(row).toMatchObject({ attempts: 1, last_response_code: 200 });
  }, 60_000);

  it("SIGTERM lets the delivery in flight finish and record its outcome, then exits 0", async () => {
    receiver.requests.length = 0;
    receiver.respond((_req, res) => void setTimeout(() => res.writeHead(204).end(), 1500));
    const t = await seedNotifierTenant(tdb.db);
    await addWebhook(tdb.db, t.tenantId, `${receiver.url}/drain`, ["*"]);
    const app = notifier();
    await started(app);
    const taskId = await finishTask(tdb.db, t, "succeed");
    await waitFor("the request to arrive", () => receiver.requests.length === 1, 15_000);

    expect(await app.stop()).toBe(0);
    const [row] = await deliveriesOf(tdb.db, taskId);
    expect(row).toMatchObject({ status: "DELIVERED", attempts: 1, last_response_code: 204 });
  });

  it("with ALLOW_PRIVATE_TARGETS=0 a private target is never contacted: FAILED with the reason", async () => {
    receiver.requests.length = 0;
    receiver.respond((_req, res) => void res.writeHead(200).end());
    const t = await seedNotifierTenant(tdb.db);
    const hook = await addWebhook(tdb.db, t.tenantId, `${receiver.url}/private`, ["*"]);
    const port = new URL(receiver.url).port;
    notifier({ ALLOW_PRIVATE_TARGETS: "0" });
    const taskId = await finishTask(tdb.db, t, "succeed", `http://localhost:${port}/private-callback`);

    const rows = await waitFor("both deliveries FAILED", async () => {
      const all = await deliveriesOf(tdb.db, taskId);
      return all.length === 2 && all.every((d) => d.status === "FAILED") ? all : null;
    });
    const byHook = rows.find((d) => d.webhook_id === hook.id);
    const callback = rows.find((d) => d.webhook_id === null);
    expect(byHook).toMatchObject({ attempts: 0, last_response_code: null, last_error: "target refused: private or reserved address" });
    expect(callback).toMatchObject({ attempts: 0, last_response_code: null, last_error: "target refused: local host name" });
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.requests).toHaveLength(0);
    // A refused target says nothing about the endpoint's health.
    const w = await tdb.db.pool.query("SELECT enabled, failure_streak FROM webhooks WHERE id = $1", [hook.id]);
    expect(w.rows[0]).toEqual({ enabled: true, failure_streak: 0 });
  });
});
