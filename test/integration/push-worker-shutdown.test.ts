/**
 * A PUSH worker stopping (SIGTERM, as on every deploy) while a request is
 * still out after its drain grace: the healthy endpoint was only slow, so
 * the attempt must not count as its failure. Real processes (scheduler and
 * workers from dist/bundle/main.js), real Postgres, Redis and HTTP endpoint. The
 * grace is WORKER_DRAIN_GRACE_SECONDS (30 by default), 3 here.
 */
import { workerShutdownDeadlineMs } from "@tasklane/config/shutdown-deadlines";
import { normalizeTaskSpec, parseInput, submitTaskInputSchema } from "@tasklane/core";
import { getTask, INTERRUPTED_ATTEMPT_REASON, listAttempts, submitTasks } from "@tasklane/db";
import { createKeySpace, createRedis, createTaskDispatcher, dispatchAfterCommit } from "@tasklane/queue";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { createTestRedis, type TestRedis } from "../helpers/platform.js";
import { printAppLogsOnFailure, startServingApp } from "../helpers/ready-apps.js";
import { seedPushQueue, seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

const DRAIN_GRACE_SECONDS = 3;

let tdb: TestDatabase;
let testRedis: TestRedis;
let redis: Redis;
let receiver: HttpReceiver;
let tenantId: string;
const apps: AppProcess[] = [];
/** Ends the first request, which the endpoint holds far past the drain grace. */
let releaseFirst: () => void = () => undefined;

const env = () => ({
  DATABASE_URL: tdb.url,
  REDIS_URL: testRedis.url,
  REDIS_KEY_PREFIX: testRedis.prefix,
  ALLOW_PRIVATE_TARGETS: "1",
  RECONCILE_INTERVAL_SECONDS: "1",
  WORKER_DRAIN_GRACE_SECONDS: String(DRAIN_GRACE_SECONDS),
  LOG_LEVEL: "info",
});

async function start(name: "scheduler" | "worker"): Promise<AppProcess> {
  const { app } = await startServingApp(name, env());
  apps.push(app);
  return app;
}

beforeAll(async () => {
  tdb = await createTestDatabase("push_stop");
  testRedis = createTestRedis();
  redis = createRedis(testRedis.url, "test");
  const held = new Promise<void>((resolve) => (releaseFirst = resolve));
  receiver = await startReceiver(async (_req, res) => {
    // The first request takes longer than the drain grace (a 45 s job); the next answers at once.
    if (receiver.requests.length === 1) await Promise.race([held, new Promise((r) => setTimeout(r, 45_000))]);
    if (!res.destroyed) res.writeHead(200, { "content-type": "application/json" }).end('{"done":true}');
  });
  ({ tenantId } = await seedTenant(tdb.db));
  await seedPushQueue(tdb.db, tenantId, "push", `${receiver.url}/hook`);
});

afterAll(async () => {
  releaseFirst();
  await Promise.all(apps.map((a) => a.stop(45_000)));
  redis?.disconnect();
  await testRedis?.cleanup();
  await receiver?.close();
  await tdb?.drop();
});

describe("PUSH worker stopping mid-request", () => {
  printAppLogsOnFailure(apps);

  it("hands a request still out after the drain grace back uncharged, and another worker runs it to SUCCEEDED", async () => {
    await start("scheduler");
    const first = await start("worker");
    const spec = normalizeTaskSpec(parseInput(submitTaskInputSchema, { queue: "push", type: "slow", maxAttempts: 1 }), Date.now());
    const { tasks, dispatch } = await submitTasks(tdb.db, tenantId, [spec], { horizonMs: 300_000 });
    await dispatchAfterCommit(tdb.db, createTaskDispatcher(redis, createKeySpace(testRedis.prefix)), dispatch, (e) => {
      throw e;
    });
    const id = tasks[0]!.id;
    await waitFor("the request to reach the endpoint", () => receiver.requests.length === 1, 30_000);

    // The drain grace runs out with the request still out; the worker exits 0 all the same, after the grace.
    const stoppedAt = Date.now();
    expect(await first.stop(60_000)).toBe(0);
    const stoppedIn = Date.now() - stoppedAt;
    expect(stoppedIn).toBeGreaterThanOrEqual(DRAIN_GRACE_SECONDS * 1000);
    // The grace it was given, not the default 30 s: well inside its deadline (the grace + 10 s).
    expect(stoppedIn).toBeLessThan(workerShutdownDeadlineMs(DRAIN_GRACE_SECONDS * 1000));
    expect(first.output()).toContain("drain grace over: handing back the attempts still in flight");
    expect(receiver.requests).toHaveLength(1);
    const returned = await getTask(tdb.db, tenantId, id);
    // Not FAILED or DEAD, and the attempt not charged: with maxAttempts 1 it used to be DEAD ("ClientDestroyedError").
    expect(returned).toMatchObject({ status: "QUEUED", attempts: 0, lastError: null });
    expect((await listAttempts(tdb.db, [id])).get(id) ?? []).toEqual([]);
    const events = await tdb.db.pool.query("SELECT from_status, to_status, reason FROM task_events WHERE task_id = $1 ORDER BY id", [id]);
    expect(events.rows.at(-1)).toEqual({ from_status: "RUNNING", to_status: "QUEUED", reason: INTERRUPTED_ATTEMPT_REASON });

    await start("worker");
    const done = await waitFor("the task to run again and settle", async () => {
      const t = await getTask(tdb.db, tenantId, id);
      return t && ["SUCCEEDED", "DEAD"].includes(t.status) ? t : null;
    }, 30_000);
    expect(done).toMatchObject({ status: "SUCCEEDED", attempts: 1, result: { done: true } });
    expect(receiver.requests).toHaveLength(2);
  }, 120_000);
});
