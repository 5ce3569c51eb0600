import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHmac } from "node:crypto";
import { Redis } from "ioredis";
import { normalizeTaskSpec, parseInput, submitTaskInputSchema, type SubmitTaskInput } from "@tasklane/core";
import { cancelTask, getTask, listAttempts, redriveTask, submitTasks, type TaskRecord } from "@tasklane/db";
import { createKeySpace, createRedis, createTaskDispatcher, announceCancellations, dispatchAfterCommit, jobIdFor, type TaskDispatcher } from "@tasklane/queue";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { REDIS_DB, redisUrl } from "../helpers/redis-dbs.js";
import { seedPushQueue, seedTenant } from "../helpers/seed.js";
import { createTestDatabase, uniqueRedisPrefix, type TestDatabase } from "../helpers/test-database.js";

/**
 * The PUSH path end to end with real processes: a scheduler and a worker
 * against real Postgres and Redis, executing against a real HTTP endpoint.
 * Tasks are submitted through the same db function and post-commit fast
 * path the gateway uses.
 */
const REDIS_URL = redisUrl(REDIS_DB.pushExecution);
/** A short dispatch horizon, so "far-future" tasks are a few seconds away. */
const HORIZON_MS = 2_000;
/** The worker's look-ahead (WORKER_START_AHEAD_MS): the longest, see beforeAll. */
const START_AHEAD_MS = 1_000;
let tdb: TestDatabase;
let receiver: HttpReceiver;
let redis: Redis;
let dispatcher: TaskDispatcher;
let apps: AppProcess[] = [];
let tenantId: string;
let signingSecret: string;
const prefix = uniqueRedisPrefix("push");
const routes = new Map<string, (attempt: number) => { status: number; body?: string; delayMs?: number; headers?: Record<string, string> }>();

async function submit(input: Partial<SubmitTaskInput> & { type: string }): Promise<TaskRecord> {
  const spec = normalizeTaskSpec(parseInput(submitTaskInputSchema, { queue: "push", ...input }), Date.now());
  const { tasks, dispatch } = await submitTasks(tdb.db, tenantId, [spec], { horizonMs: HORIZON_MS });
  await dispatchAfterCommit(tdb.db, dispatcher, dispatch, (e) => {
    throw e;
  });
  return tasks[0]!;
}

/** As the gateway's cancelTask does: the transition, then the announcement to workers when it was RUNNING. */
async function cancel(id: string): Promise<void> {
  const { wasRunning } = await cancelTask(tdb.db, tenantId, id, "test");
  if (wasRunning) await announceCancellations(redis, createKeySpace(prefix), [id]);
}

const settled = (id: string) =>
  waitFor(`task ${id} to settle`, async () => {
    const t = await getTask(tdb.db, tenantId, id);
    return t && ["SUCCEEDED", "DEAD", "CANCELLED"].includes(t.status) ? t : null;
  });

beforeAll(async () => {
  tdb = await createTestDatabase("push");
  redis = createRedis(REDIS_URL, "test");
  await redis.flushdb();
  dispatcher = createTaskDispatcher(redis, createKeySpace(prefix));
  receiver = await startReceiver(async (req, res) => {
    const body = req.json as { type: string; attempt: number };
    const route = routes.get(body.type)?.(body.attempt) ?? { status: 200, body: JSON.stringify({ echo: body.type }) };
    if (route.delayMs) await new Promise((r) => setTimeout(r, route.delayMs));
    if (res.destroyed) return;
    res.writeHead(route.status, { "content-type": "application/json", ...route.headers }).end(route.body ?? "");
  });
  ({ tenantId } = await seedTenant(tdb.db));
  signingSecret = (await tdb.db.pool.query("SELECT signing_secret FROM tenants WHERE id = $1", [tenantId])).rows[0].signing_secret;
  await seedPushQueue(tdb.db, tenantId, "push", `${receiver.url}/hook`);
  const env = {
    DATABASE_URL: tdb.url,
    REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
    ALLOW_PRIVATE_TARGETS: "1",
    RECONCILE_INTERVAL_SECONDS: "1",
    DISPATCH_HORIZON_SECONDS: String(HORIZON_MS / 1000),
    LOG_LEVEL: "warn",
  };
  // The longest look-ahead, so every delayed task and retry here is started half a second to a second early and held:
  // the tests below that check a request never comes before runAt check the hold.
  apps = [startApp("scheduler", env), startApp("worker", { ...env, WORKER_CONCURRENCY: "20", WORKER_START_AHEAD_MS: String(START_AHEAD_MS) })];
});

afterAll(async () => {
  await Promise.all(apps.map((a) => a.stop()));
  redis?.disconnect();
  await receiver?.close();
  await tdb?.drop();
});

describe("PUSH execution", () => {
  it("POSTs {taskId, type, payload, attempt}, signed, with Idempotency-Key, and stores the JSON result", async () => {
    const task = await submit({ type: "ok", payload: { n: 1 } });
    const done = await settled(task.id);
    expect(done).toMatchObject({ status: "SUCCEEDED", attempts: 1, result: { echo: "ok" } });
    const req = receiver.requests.find((r) => (r.json as { taskId?: string }).taskId === task.id)!;
    expect(req.json).toEqual({ taskId: task.id, type: "ok", payload: { n: 1 }, attempt: 1 });
    expect(req.headers["idempotency-key"]).toBe(task.id);
    // Standard Webhooks, verified independently of core's signer.
    const key = Buffer.from(signingSecret.replace(/^whsec_/, ""), "base64");
    const signed = `${req.headers["webhook-id"]}.${req.headers["webhook-timestamp"]}.${req.body}`;
    const expected = createHmac("sha256", key).update(signed).digest("base64");
    expect(String(req.headers["webhook-signature"]).split(" ")).toContain(`v1,${expected}`);
  });

  it("records each task of a completion batch once when one answer escapes an unpaired surrogate, kept as its text", async () => {
    // Tenant A's endpoint answers JSON that jsonb refuses ("\ud800"); tenant B's 30 tasks finish in the same moments.
    const lone = '{"a":"\\ud800"}';
    routes.set("lone", () => ({ status: 200, body: lone, delayMs: 200 }));
    routes.set("batch-mate", () => ({ status: 200, body: '{"ok":true}', delayMs: 200 }));
    const other = await seedTenant(tdb.db);
    await seedPushQueue(tdb.db, other.tenantId, "push", `${receiver.url}/hook`);
    // A lease expiry would come 5 + 15 s after the start, well inside the wait for the tasks to settle.
    const specs = (type: string, n: number) =>
      Array.from({ length: n }, () => normalizeTaskSpec(parseInput(submitTaskInputSchema, { queue: "push", type, timeoutSeconds: 5 }), Date.now()));
    const [odd, mates] = await Promise.all([
      submitTasks(tdb.db, tenantId, specs("lone", 1), { horizonMs: HORIZON_MS }),
      submitTasks(tdb.db, other.tenantId, specs("batch-mate", 30), { horizonMs: HORIZON_MS }),
    ]);
    await dispatchAfterCommit(tdb.db, dispatcher, [...odd.dispatch, ...mates.dispatch], (e) => {
      throw e;
    });
    const oddId = odd.tasks[0]!.id;
    const settledIn = (tenant: string, id: string) =>
      waitFor(`task ${id} to settle`, async () => {
        const t = await getTask(tdb.db, tenant, id);
        return t && ["SUCCEEDED", "DEAD"].includes(t.status) ? t : null;
      });
    expect(await settledIn(tenantId, oddId)).toMatchObject({ status: "SUCCEEDED", attempts: 1, result: lone });
    for (const t of mates.tasks) expect(await settledIn(other.tenantId, t.id)).toMatchObject({ status: "SUCCEEDED", attempts: 1, result: { ok: true } });
    const hits = (id: string) => receiver.requests.filter((r) => (r.json as { taskId?: string }).taskId === id).length;
    expect([oddId, ...mates.tasks.map((t) => t.id)].map(hits)).toEqual(Array(31).fill(1));
    const history = await listAttempts(tdb.db, [oddId, ...mates.tasks.map((t) => t.id)]);
    expect([...history.values()].flat().map((a) => a.outcome)).toEqual(Array(31).fill("SUCCEEDED"));
  });

  it("retries a 500 with backoff and succeeds on the next attempt", async () => {
    routes.set("flaky", (attempt) => (attempt === 1 ? { status: 500, body: "down" } : { status: 200, body: '"fine"' }));
    const task = await submit({ type: "flaky", maxAttempts: 3, backoff: { strategy: "FIXED", delaySeconds: 0.2, jitter: false } });
    const done = await settled(task.id);
    expect(done).toMatchObject({ status: "SUCCEEDED", attempts: 2, result: "fine" });
    const history = (await listAttempts(tdb.db, [task.id])).get(task.id)!;
    expect(history.map((a) => a.outcome)).toEqual(["FAILED", "SUCCEEDED"]);
    expect(history[0]!.error).toContain("HTTP 500");
  });

  it("records a 2xx answer over the result limit as SUCCEEDED without its result, saying why; an oversized 503 is retried", async () => {
    const big = "x".repeat(300 * 1024);
    routes.set("big-ok", () => ({ status: 200, body: JSON.stringify({ blob: big }) }));
    const ok = await submit({ type: "big-ok", maxAttempts: 3 });
    expect(await settled(ok.id)).toMatchObject({ status: "SUCCEEDED", attempts: 1, result: null });
    const [attempt] = (await listAttempts(tdb.db, [ok.id])).get(ok.id)!;
    expect(attempt).toMatchObject({ outcome: "SUCCEEDED", error: "Result not kept: the answer exceeds 262144 bytes (HTTP 200)" });
    const events = await tdb.db.pool.query("SELECT to_status, reason FROM task_events WHERE task_id = $1 ORDER BY id", [ok.id]);
    expect(events.rows.at(-1)).toEqual({ to_status: "SUCCEEDED", reason: attempt!.error });

    routes.set("big-503", (n) => (n === 1 ? { status: 503, body: `<html>${big}</html>` } : { status: 200, body: '"fine"' }));
    const flaky = await submit({ type: "big-503", maxAttempts: 3, backoff: { strategy: "FIXED", delaySeconds: 0.1, jitter: false } });
    expect(await settled(flaky.id)).toMatchObject({ status: "SUCCEEDED", attempts: 2, result: "fine" });
    const history = (await listAttempts(tdb.db, [flaky.id])).get(flaky.id)!;
    expect(history.map((a) => a.outcome)).toEqual(["FAILED", "SUCCEEDED"]);
    expect(history[0]!.error).toMatch(/^HTTP 503: <html>x+$/);
  });

  it("sends an endpoint answering 101 straight to DEAD, saying so", async () => {
    routes.set("switching", () => ({ status: 101 }));
    const task = await submit({ type: "switching", maxAttempts: 3 });
    const done = await settled(task.id);
    expect(done).toMatchObject({ status: "DEAD", attempts: 1, lastError: "Endpoint answered 101, not a final status" });
  });

  it("sends a permanent 4xx straight to DEAD", async () => {
    routes.set("bad", () => ({ status: 422, body: "nope" }));
    const task = await submit({ type: "bad", maxAttempts: 5 });
    const done = await settled(task.id);
    expect(done).toMatchObject({ status: "DEAD", attempts: 1 });
    expect(done.lastError).toContain("HTTP 422");
  });

  it("names every request of a task apart (webhook-id), also after a redrive restarts the attempt numbers", async () => {
    let failing = true;
    routes.set("again", () => (failing ? { status: 500, body: "down" } : { status: 200, body: "{}" }));
    const task = await submit({ type: "again", maxAttempts: 2, backoff: { strategy: "FIXED", delaySeconds: 0.1, jitter: false } });
    expect(await settled(task.id)).toMatchObject({ status: "DEAD", attempts: 2 });
    failing = false;
    const { dispatch } = await redriveTask(tdb.db, tenantId, task.id, "test", HORIZON_MS);
    await dispatchAfterCommit(tdb.db, dispatcher, dispatch, (e) => {
      throw e;
    });
    expect(await settled(task.id)).toMatchObject({ status: "SUCCEEDED", attempts: 1 });
    const sent = receiver.requests.filter((r) => (r.json as { taskId?: string }).taskId === task.id);
    expect(sent.map((r) => (r.json as { attempt: number }).attempt)).toEqual([1, 2, 1]);
    // Receivers deduplicate on webhook-id: the redriven attempt 1 is a new message, not attempt 1's repeat.
    expect(new Set(sent.map((r) => r.headers["webhook-id"])).size).toBe(3);
    // A worker signs its starts as its outcomes: worker:<id>.
    const actors = await tdb.db.pool.query(`SELECT DISTINCT actor FROM task_events WHERE task_id = $1 AND (to_status = 'RUNNING' OR from_status = 'RUNNING')`, [task.id]);
    expect(actors.rows.length).toBeGreaterThan(0);
    expect(actors.rows.every((r) => String(r.actor).startsWith("worker:"))).toBe(true);
  });

  it("aborts at timeoutSeconds, records TIMED_OUT and dead-letters when the budget is spent", async () => {
    routes.set("slow", () => ({ status: 200, delayMs: 3000 }));
    const task = await submit({ type: "slow", timeoutSeconds: 1, maxAttempts: 2, backoff: { strategy: "FIXED", delaySeconds: 0.1, jitter: false } });
    const done = await settled(task.id);
    expect(done.status).toBe("DEAD");
    const history = (await listAttempts(tdb.db, [task.id])).get(task.id)!;
    expect(history.map((a) => a.outcome)).toEqual(["TIMED_OUT", "TIMED_OUT"]);
  });

  it("honours Retry-After on 429", async () => {
    routes.set("limited", (attempt) => (attempt === 1 ? { status: 429, headers: { "retry-after": "1" } } : { status: 200 }));
    const task = await submit({ type: "limited", maxAttempts: 2, backoff: { strategy: "FIXED", delaySeconds: 0.05, jitter: false } });
    const done = await settled(task.id);
    expect(done.status).toBe("SUCCEEDED");
    const times = receiver.requests.filter((r) => (r.json as { taskId?: string }).taskId === task.id).map((r) => r.at);
    expect(times).toHaveLength(2);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(950);
  });

  it("never starts a delayed task before its runAt", async () => {
    const runAt = new Date(Date.now() + 1500);
    const task = await submit({ type: "timed", runAt });
    await settled(task.id);
    const req = receiver.requests.find((r) => (r.json as { taskId?: string }).taskId === task.id)!;
    expect(req.at).toBeGreaterThanOrEqual(runAt.getTime());
  });

  it("starts a delayed task ahead and holds it: cancelled meanwhile, its request is never sent", async () => {
    const runAt = new Date(Date.now() + 2_500);
    const task = await submit({ type: "held", runAt });
    // The worker gathers it gatherLeadMs(START_AHEAD_MS) (500 ms) before runAt: waiting until just short of runAt leaves ~400 ms of slack.
    await waitFor("the task to be started ahead of its runAt", async () => (await getTask(tdb.db, tenantId, task.id))?.status === "RUNNING", runAt.getTime() - Date.now() - 100, 20);
    expect(Date.now()).toBeLessThan(runAt.getTime());
    await cancel(task.id);
    await new Promise((r) => setTimeout(r, runAt.getTime() + 500 - Date.now()));
    expect(receiver.requests.some((r) => (r.json as { taskId?: string }).taskId === task.id)).toBe(false);
    expect((await getTask(tdb.db, tenantId, task.id))!.status).toBe("CANCELLED");
  });

  it("keeps far-future tasks in Postgres only, promotes them as they near, and survives a wipe meanwhile", async () => {
    const keys = createKeySpace(prefix);
    const runAt = new Date(Date.now() + 5_000);
    const task = await submit({ type: "far", runAt });
    const row = await tdb.db.pool.query("SELECT queue_id, enqueued_generation FROM tasks WHERE id = $1", [task.id]);
    expect(row.rows[0].enqueued_generation).toBe(0);
    const jobKey = keys.jobKey(keys.bullQueueName(tenantId, row.rows[0].queue_id), `${task.id}.1`);
    expect(await redis.exists(jobKey)).toBe(0);
    await redis.flushdb();
    await waitFor("promotion into Redis", async () => (await redis.exists(jobKey)) === 1, 10_000);
    const done = await settled(task.id);
    expect(done.status).toBe("SUCCEEDED");
    const req = receiver.requests.find((r) => (r.json as { taskId?: string }).taskId === task.id)!;
    expect(req.at).toBeGreaterThanOrEqual(runAt.getTime());
  });

  it("never runs a task cancelled while it waited", async () => {
    const task = await submit({ type: "cancel-me", delaySeconds: 1 });
    // Maybe already started and held (the look-ahead is as long as the delay): either way nothing is sent.
    await cancel(task.id);
    await new Promise((r) => setTimeout(r, 1800));
    expect(receiver.requests.some((r) => (r.json as { taskId?: string }).taskId === task.id)).toBe(false);
    expect((await getTask(tdb.db, tenantId, task.id))!.status).toBe("CANCELLED");
  });

  it("loses nothing when Redis is wiped mid-run", async () => {
    routes.set("bulk", () => ({ status: 200, delayMs: 5 }));
    const tasks: TaskRecord[] = [];
    for (let i = 0; i < 200; i++) tasks.push(await submit({ type: "bulk", delaySeconds: i % 2 === 0 ? 0 : 1.5 }));
    await redis.flushdb();
    const done = await Promise.all(tasks.map((t) => settled(t.id)));
    expect(done.every((t) => t.status === "SUCCEEDED")).toBe(true);
    const seen = new Set(receiver.requests.filter((r) => (r.json as { type?: string }).type === "bulk").map((r) => (r.json as { taskId: string }).taskId));
    expect(seen.size).toBe(200);
  });

  it("puts back a job that went missing from Redis, and one a dead taker left behind (the reconciler's sweep)", async () => {
    // A paused queue: its task waits in Redis, where no worker takes it.
    const queueId = await seedPushQueue(tdb.db, tenantId, "held", `${receiver.url}/hook`);
    await tdb.db.pool.query("UPDATE queues SET paused = true WHERE id = $1", [queueId]);
    const task = await submit({ type: "held", queue: "held" });
    const keys = createKeySpace(prefix);
    const jobKey = keys.jobKey(keys.bullQueueName(tenantId, queueId), jobIdFor(task.id, task.dispatchGeneration));
    expect(await redis.exists(jobKey)).toBe(1);

    // Evicted.
    await redis.del(jobKey);
    await waitFor("the sweep to put the job back", async () => (await redis.exists(jobKey)) === 1);

    // Taken as BullMQ's moveToActive takes a job (processedOn), by a worker that died before letting go (no lock).
    await redis.hset(jobKey, "processedOn", String(Date.now()));
    await waitFor("the sweep to replace the orphaned job", async () => (await redis.exists(jobKey)) === 1 && (await redis.hexists(jobKey, "processedOn")) === 0);
    expect((await getTask(tdb.db, tenantId, task.id))?.status).toBe("QUEUED");
  });
});
