/**
 * A PUSH worker that has its tasks' answers when Postgres goes away keeps
 * them and records them once Postgres is back, while their leases last: each
 * task SUCCEEDED once, its endpoint called once, seconds after the cut ends
 * instead of a second run when the lease (timeout + 15 s) runs out (QA t6: 16
 * of 40 tasks RUNNING for 315 s after a 15 s cut, then run again). A real
 * worker process, Postgres behind a TCP proxy; the endpoint holds its answers
 * until Postgres is cut, then answers them all at once, so every outcome is
 * waiting to be recorded while Postgres cannot be reached.
 */
import { normalizeTaskSpec, parseInput, submitTaskInputSchema } from "@tasklane/core";
import { getTask, submitTasks, type TaskRecord } from "@tasklane/db";
import { createKeySpace, createRedis, createTaskDispatcher, dispatchAfterCommit, type RedisClient, type TaskDispatcher } from "@tasklane/queue";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { freePort } from "../helpers/free-port.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { createTestRedis, type TestRedis } from "../helpers/platform.js";
import { seedPushQueue, seedTenant } from "../helpers/seed.js";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

const TASKS = 40;
/** Far below the lease path (the default 300 s timeout + 15 s). */
const SETTLE_BOUND_MS = 20_000;

let tdb: TestDatabase;
let testRedis: TestRedis;
let redis: RedisClient;
let dispatcher: TaskDispatcher;
let proxy: TcpProxy;
let receiver: HttpReceiver;
/** Answers held by the endpoint until the test lets them go. */
let holding: Array<() => void> = [];

beforeAll(async () => {
  tdb = await createTestDatabase("pushcut");
  testRedis = createTestRedis();
  redis = createRedis(testRedis.url, "test");
  dispatcher = createTaskDispatcher(redis, createKeySpace(testRedis.prefix));
  proxy = await startTcpProxy("127.0.0.1", Number(new URL(tdb.url).port || 5432));
  receiver = await startReceiver((req, res) => {
    const { taskId, type } = req.json as { taskId: string; type: string };
    const answer = type.startsWith("fail")
      ? () => res.writeHead(500, { "content-type": "text/plain" }).end("down for a moment")
      : () => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ echo: taskId }));
    holding.push(answer);
  });
});

afterAll(async () => {
  for (const answer of holding) answer();
  await receiver?.close();
  redis?.disconnect();
  await proxy?.close();
  await testRedis?.cleanup();
  await tdb?.drop();
});

async function startWorker(): Promise<AppProcess & { metricsUrl: string }> {
  const port = await freePort();
  const app = startApp("worker", {
    DATABASE_URL: proxy.rewrite(tdb.url),
    REDIS_URL: testRedis.url,
    REDIS_KEY_PREFIX: testRedis.prefix,
    ALLOW_PRIVATE_TARGETS: "1",
    WORKER_CONCURRENCY: "50",
    METRICS_PORT: String(port),
    LOG_LEVEL: "info",
  });
  return Object.assign(app, { metricsUrl: `http://127.0.0.1:${port}/metrics` });
}

/** TASKS PUSH tasks of a new tenant, dispatched; resolves once the endpoint holds every request. */
async function submitAndHold(type = "t", maxAttempts = 3): Promise<{ tenantId: string; tasks: TaskRecord[] }> {
  const { tenantId } = await seedTenant(tdb.db);
  await seedPushQueue(tdb.db, tenantId, "push", `${receiver.url}/hook`);
  const specs = Array.from({ length: TASKS }, (_, i) => normalizeTaskSpec(parseInput(submitTaskInputSchema, { queue: "push", type: `${type}${i}`, maxAttempts }), Date.now()));
  const { tasks, dispatch } = await submitTasks(tdb.db, tenantId, specs, { horizonMs: 60_000 });
  await dispatchAfterCommit(tdb.db, dispatcher, dispatch, (e) => {
    throw e;
  });
  // The worker's queue directory learns a new queue within a second.
  await waitFor("the endpoint to hold every request", () => holding.length >= TASKS, 30_000, 20);
  return { tenantId, tasks };
}

const releaseAnswers = () => {
  const answers = holding;
  holding = [];
  for (const answer of answers) answer();
};

async function expectEachSucceededOnce(tenantId: string, tasks: TaskRecord[], sinceMs: number): Promise<number> {
  await waitFor(
    "every task SUCCEEDED",
    async () => {
      const { rows } = await tdb.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM tasks WHERE tenant_id = $1 AND status = 'SUCCEEDED'", [tenantId]);
      return rows[0]!.n === tasks.length;
    },
    SETTLE_BOUND_MS,
    50,
  );
  const tookMs = Date.now() - sinceMs;
  for (const task of tasks) {
    expect(await getTask(tdb.db, tenantId, task.id)).toMatchObject({ status: "SUCCEEDED", attempts: 1, result: { echo: task.id } });
    expect(receiver.requests.filter((r) => (r.json as { taskId?: string }).taskId === task.id)).toHaveLength(1);
  }
  return tookMs;
}

const logLines = (worker: AppProcess) =>
  worker
    .output()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { msg: string; level: number });

describe("PUSH outcomes while Postgres is cut", () => {
  it("are held and recorded once Postgres answers again: each task SUCCEEDED once, within seconds", async () => {
    const worker = await startWorker();
    try {
      const { tenantId, tasks } = await submitAndHold();
      await proxy.cut();
      releaseAnswers();
      // Every answer is in and failing to be recorded; a few backoff rounds go by.
      await new Promise((r) => setTimeout(r, 4_000));
      const during = await tdb.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM tasks WHERE tenant_id = $1 AND status = 'RUNNING'", [tenantId]);
      expect(during.rows[0]!.n).toBe(TASKS);
      expect(await (await fetch(worker.metricsUrl)).text()).toContain(`tasklane_worker_held_outcomes{app="worker"} ${TASKS}`);
      const restoredAt = Date.now();
      await proxy.restore();
      const tookMs = await expectEachSucceededOnce(tenantId, tasks, restoredAt);
      console.log(`all ${TASKS} recorded ${tookMs} ms after Postgres came back`);
      const lines = logLines(worker);
      // Said once (throttled), not once per task; nothing dropped.
      expect(lines.filter((l) => l.msg.startsWith("could not record outcomes: Postgres unreachable"))).toHaveLength(1);
      expect(lines.filter((l) => l.msg === "could not record attempt outcome" || l.msg.startsWith("dropped held outcomes"))).toEqual([]);
      await waitFor("the recovery line", () => logLines(worker).some((l) => l.msg === "recording outcomes again"), 5_000, 50);
    } finally {
      expect(await worker.stop(45_000)).toBe(0);
    }
  }, 90_000);

  it("are recorded during the drain when the worker is stopped while Postgres is cut", async () => {
    const worker = await startWorker();
    const { tenantId, tasks } = await submitAndHold();
    await proxy.cut();
    releaseAnswers();
    await new Promise((r) => setTimeout(r, 1_000));
    const exit = worker.stop(45_000);
    await new Promise((r) => setTimeout(r, 2_000));
    const restoredAt = Date.now();
    await proxy.restore();
    await expectEachSucceededOnce(tenantId, tasks, restoredAt);
    expect(await exit).toBe(0);
  }, 90_000);

  it("holds a failed attempt's record the same way: a task whose last attempt failed is DEAD once, not run again after its lease", async () => {
    const worker = await startWorker();
    try {
      const { tenantId, tasks } = await submitAndHold("fail", 1);
      await proxy.cut();
      releaseAnswers();
      await new Promise((r) => setTimeout(r, 3_000));
      const restoredAt = Date.now();
      await proxy.restore();
      await waitFor(
        "every task DEAD",
        async () => {
          const { rows } = await tdb.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM tasks WHERE tenant_id = $1 AND status = 'DEAD'", [tenantId]);
          return rows[0]!.n === TASKS;
        },
        SETTLE_BOUND_MS,
        50,
      );
      console.log(`all ${TASKS} failures recorded ${Date.now() - restoredAt} ms after Postgres came back`);
      const { rows } = await tdb.db.pool.query<{ outcome: string; n: number }>(
        "SELECT a.outcome, count(*)::int AS n FROM task_attempts a JOIN tasks t ON t.id = a.task_id WHERE t.tenant_id = $1 GROUP BY a.outcome",
        [tenantId],
      );
      expect(rows).toEqual([{ outcome: "FAILED", n: TASKS }]);
      for (const task of tasks) expect(receiver.requests.filter((r) => (r.json as { taskId?: string }).taskId === task.id)).toHaveLength(1);
    } finally {
      expect(await worker.stop(45_000)).toBe(0);
    }
  }, 90_000);
});
