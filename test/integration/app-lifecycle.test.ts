/**
 * Operations surface of the apps: the background apps as production runs them
 * (child processes on dist/bundle/main.js) with /metrics, liveness vs readiness on
 * METRICS_PORT, the metrics each app promises and SIGTERM draining to exit 0;
 * the gateway's /livez and /readyz next to its contract /healthz.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { normalizeTaskSpec, parseInput, submitTaskInputSchema, type SubmitTaskInput } from "@tasklane/core";
import { getTask, submitTasks, type TaskRecord } from "@tasklane/db";
import { createKeySpace, createRedis, createTaskDispatcher, dispatchAfterCommit, type TaskDispatcher } from "@tasklane/queue";
import type { Redis } from "ioredis";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { createTestRedis, startGateway, type StartedGateway, type TestRedis } from "../helpers/platform.js";
import { sampleValue } from "../helpers/prometheus-text.js";
import { seedPushQueue, seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { freePort } from "../helpers/free-port.js";

let tdb: TestDatabase;
let testRedis: TestRedis;
/** The scheduler tests' own key space, so the jobs they dispatch never reach the worker tests. */
let schedulerRedis: TestRedis;
let redis: Redis;
let dispatcher: TaskDispatcher;
let receiver: HttpReceiver;
let tenantId: string;
const running: AppProcess[] = [];
/** Per task type: how long the endpoint takes and what it answers. */
const routes = new Map<string, { status: number; delayMs?: number }>();

async function start(name: "scheduler" | "worker" | "notifier", env: Record<string, string> = {}) {
  const port = await freePort();
  const app = startApp(name, {
    DATABASE_URL: tdb.url,
    REDIS_URL: testRedis.url,
    REDIS_KEY_PREFIX: testRedis.prefix,
    ALLOW_PRIVATE_TARGETS: "1",
    LOG_LEVEL: "warn",
    METRICS_PORT: String(port),
    ...env,
  });
  running.push(app);
  const ops = `http://127.0.0.1:${port}`;
  await waitFor(`${name} /livez`, async () => (await fetch(`${ops}/livez`)).status === 200, 30_000, 100);
  return { app, ops };
}

const metricsOf = async (ops: string) => (await fetch(`${ops}/metrics`)).text();

/** Submits through the same db function the gateway uses; `dispatch: false` leaves the outbox row to the scheduler. */
async function submit(input: Partial<SubmitTaskInput> & { type: string }, dispatch = true): Promise<TaskRecord> {
  const spec = normalizeTaskSpec(parseInput(submitTaskInputSchema, { queue: "push", ...input }), Date.now());
  const { tasks, dispatch: intents } = await submitTasks(tdb.db, tenantId, [spec], { horizonMs: 300_000 });
  if (dispatch) await dispatchAfterCommit(tdb.db, dispatcher, intents, (e) => {
    throw e;
  });
  return tasks[0] as TaskRecord;
}

const settled = (id: string) =>
  waitFor(`task ${id} to settle`, async () => {
    const t = await getTask(tdb.db, tenantId, id);
    return t && ["SUCCEEDED", "DEAD"].includes(t.status) ? t : null;
  });

beforeAll(async () => {
  tdb = await createTestDatabase("ops");
  testRedis = createTestRedis();
  schedulerRedis = createTestRedis();
  redis = createRedis(testRedis.url, "test");
  dispatcher = createTaskDispatcher(redis, createKeySpace(testRedis.prefix));
  receiver = await startReceiver(async (req, res) => {
    const route = routes.get((req.json as { type: string }).type) ?? { status: 200 };
    if (route.delayMs) await new Promise((r) => setTimeout(r, route.delayMs));
    res.writeHead(route.status, { "content-type": "application/json" }).end("{}");
  });
  ({ tenantId } = await seedTenant(tdb.db));
  await seedPushQueue(tdb.db, tenantId, "push", `${receiver.url}/hook`);
});

afterEach(async () => {
  const codes = await Promise.all(running.splice(0).map((a) => a.stop(5_000)));
  expect(codes.every((c) => c === 0)).toBe(true);
});

afterAll(async () => {
  redis?.disconnect();
  await testRedis?.cleanup();
  await schedulerRedis?.cleanup();
  await receiver?.close();
  await tdb?.drop();
});

describe("scheduler", () => {
  const own = () => ({ REDIS_KEY_PREFIX: schedulerRedis.prefix });
  it("reports backlog gauges from Postgres and its loop counters, is ready with Postgres and Redis, exits 0 on SIGTERM", async () => {
    await submit({ type: "later", runAt: new Date(Date.now() + 3_600_000) });
    const waiting = await submit({ type: "now" }, false); // outbox row only: the scheduler must dispatch it
    const dead = await submit({ type: "dead", runAt: new Date(Date.now() + 3_600_000) });
    await tdb.db.pool.query("UPDATE tasks SET status = 'DEAD' WHERE id = $1", [dead.id]);

    const { app, ops } = await start("scheduler", own());
    expect((await fetch(`${ops}/healthz`)).status).toBe(200);
    const ready = await fetch(`${ops}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ready", postgres: "ok", redis: "ok" });

    // The depth loop's first query and the outbox loop's first dispatch race at start-up: wait for both.
    const text = await waitFor("outbox dispatch counted and backlog measured", async () => {
      const t = await metricsOf(ops);
      const dispatched = (sampleValue(t, "tasklane_outbox_dispatched_total") ?? 0) >= 1;
      return dispatched && sampleValue(t, "tasklane_dead_letter_tasks", { mode: "PUSH" }) !== undefined ? t : null;
    }, 10_000);
    expect(sampleValue(text, "tasklane_queue_depth", { status: "SCHEDULED", mode: "PUSH", app: "scheduler" })).toBe(1);
    expect(sampleValue(text, "tasklane_queue_depth", { status: "QUEUED", mode: "PUSH" })).toBe(1);
    expect(sampleValue(text, "tasklane_queue_depth", { status: "RUNNING", mode: "PULL" })).toBe(0);
    expect(sampleValue(text, "tasklane_dead_letter_tasks", { mode: "PUSH" })).toBe(1);
    expect(sampleValue(text, "tasklane_oldest_queued_age_seconds", { mode: "PUSH" })).toBeGreaterThan(0);
    expect(sampleValue(text, "tasklane_oldest_queued_age_seconds", { mode: "PULL" })).toBe(0);
    for (const counter of ["tasklane_lease_expirations_total", "tasklane_schedules_fired_total"]) expect(sampleValue(text, counter)).toBe(0);
    expect(text).toContain("# TYPE tasklane_reconciler_readded_total counter");
    // No tenant labels unless asked for.
    expect(text).not.toContain(`tenant="${tenantId}"`);
    expect(waiting.status).toBe("QUEUED");

    const stoppedAt = Date.now();
    expect(await app.stop()).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(5_000);
  });

  it("labels gauges by tenant and queue with METRICS_TENANT_LABELS=1", async () => {
    const { ops } = await start("scheduler", { ...own(), METRICS_TENANT_LABELS: "1" });
    const text = await waitFor("per-tenant depth", async () => {
      const t = await metricsOf(ops);
      return sampleValue(t, "tasklane_queue_depth", { tenant: tenantId }) !== undefined ? t : null;
    }, 15_000);
    expect(sampleValue(text, "tasklane_queue_depth", { status: "SCHEDULED", mode: "PUSH", tenant: tenantId, queue: "push" })).toBe(1);
    expect(sampleValue(text, "tasklane_dead_letter_tasks", { tenant: tenantId, queue: "push" })).toBe(1);
  });

  it("stays live but not ready while Redis is unreachable; SIGTERM then ends it at the shutdown deadline", async () => {
    const { app, ops } = await start("scheduler", { ...own(), REDIS_URL: "redis://127.0.0.1:1/0" });
    expect((await fetch(`${ops}/livez`)).status).toBe(200);
    const ready = await fetch(`${ops}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: "unavailable", postgres: "ok", redis: "down" });
    // A tick stuck on the unreachable Redis never finishes: the 10 s deadline ends the process instead of SIGKILL.
    running.splice(running.indexOf(app), 1);
    expect(await app.stop(20_000)).toBe(1);
    expect(app.output()).toContain("shutdown timed out");
  }, 40_000);
});

describe("worker", () => {
  it("counts starts, outcomes, retries, start delay and execution time", async () => {
    const { ops } = await start("worker");
    routes.set("flaky", { status: 500 });
    const ok = await submit({ type: "ok" });
    const flaky = await submit({ type: "flaky", maxAttempts: 2, backoff: { strategy: "FIXED", delaySeconds: 0.1, jitter: false } });
    routes.set("gone", { status: 410 });
    const gone = await submit({ type: "gone", maxAttempts: 3 });
    expect((await settled(ok.id)).status).toBe("SUCCEEDED");
    expect((await settled(flaky.id)).status).toBe("DEAD");
    expect((await settled(gone.id)).status).toBe("DEAD");

    // The worker counts an outcome once its statement's answer is back, which can be just after the task reads as settled.
    const outcomes = ["succeeded", "failed", "timed_out", "dead", "stale", "cancelled"];
    const text = await waitFor("four outcomes counted", async () => {
      const t = await metricsOf(ops);
      return outcomes.reduce((sum, outcome) => sum + (sampleValue(t, "tasklane_task_outcomes_total", { outcome }) ?? 0), 0) >= 4 ? t : null;
    }, 10_000);
    expect(sampleValue(text, "tasklane_task_starts_total", { app: "worker" })).toBe(4);
    expect(sampleValue(text, "tasklane_task_outcomes_total", { outcome: "succeeded" })).toBe(1);
    expect(sampleValue(text, "tasklane_task_outcomes_total", { outcome: "failed" })).toBe(1);
    expect(sampleValue(text, "tasklane_task_outcomes_total", { outcome: "dead" })).toBe(2);
    expect(sampleValue(text, "tasklane_retries_total")).toBe(1);
    expect(sampleValue(text, "tasklane_task_start_delay_seconds_count")).toBe(4);
    expect(sampleValue(text, "tasklane_task_execution_seconds_count")).toBe(4);
    // The retry waited out its 100 ms backoff after runAt moved, so every start is well under a second late.
    expect(sampleValue(text, "tasklane_task_start_delay_seconds_bucket", { le: "1" })).toBe(4);
    expect(sampleValue(text, "tasklane_worker_in_flight")).toBe(0);
    const ready = await fetch(`${ops}/readyz`);
    expect(await ready.json()).toEqual({ status: "ready", postgres: "ok", redis: "ok" });
  });

  it("on SIGTERM lets the PUSH attempt in flight finish and record its outcome, then exits 0", async () => {
    const { app, ops } = await start("worker", { LOG_LEVEL: "info" });
    routes.set("slow", { status: 200, delayMs: 2_000 });
    const task = await submit({ type: "slow" });
    await waitFor("the request to arrive", () => receiver.requests.some((r) => (r.json as { taskId: string }).taskId === task.id), 15_000);
    expect(sampleValue(await metricsOf(ops), "tasklane_worker_in_flight")).toBe(1);

    const stoppedAt = Date.now();
    expect(await app.stop(40_000)).toBe(0);
    // It waited for the endpoint (about 2 s), well inside the 30 s grace period.
    expect(Date.now() - stoppedAt).toBeGreaterThan(1_000);
    const done = await getTask(tdb.db, tenantId, task.id);
    expect(done).toMatchObject({ status: "SUCCEEDED", attempts: 1 });
    expect(app.output()).toMatch(/"abandoned":0,.*"msg":"worker stopped"/);
  });
});

describe("notifier", () => {
  it("serves metrics, liveness and Postgres-only readiness, and exits 0 on SIGTERM", async () => {
    const { app, ops } = await start("notifier", { REDIS_URL: "redis://127.0.0.1:1/0" });
    expect((await fetch(`${ops}/healthz`)).status).toBe(200);
    const ready = await fetch(`${ops}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ready", postgres: "ok" });
    const text = await metricsOf(ops);
    expect(sampleValue(text, "tasklane_notifier_deliveries_in_flight", { app: "notifier" })).toBe(0);
    expect(text).toContain("# TYPE tasklane_notifier_deliveries_total counter");
    expect(await app.stop()).toBe(0);
  });
});

describe("gateway", () => {
  const gateways: StartedGateway[] = [];
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.close()));
  });

  it("serves /livez always and /readyz like the contract's /healthz, and exposes the rate-limit counter", async () => {
    const up = await startGateway({ databaseUrl: tdb.url, redis: testRedis });
    const noRedis = await startGateway({ databaseUrl: tdb.url, redis: { url: "redis://127.0.0.1:1/0", prefix: "none", cleanup: async () => undefined } });
    gateways.push(up, noRedis);
    const at = (g: StartedGateway, path: string) => fetch(g.url.replace("/graphql", path));
    for (const path of ["/livez", "/readyz", "/healthz"]) expect((await at(up, path)).status, path).toBe(200);
    expect((await at(noRedis, "/livez")).status).toBe(200);
    expect((await at(noRedis, "/readyz")).status).toBe(503);
    expect((await at(noRedis, "/healthz")).status).toBe(503);
    const text = await (await at(up, "/metrics")).text();
    expect(text).toContain("# TYPE tasklane_rate_limited_total counter");
    expect(text).toContain("# TYPE tasklane_tasks_submitted_total counter");
  });
});
