/**
 * A PUSH queue that starts to run again (resumeQueue, upsertQueue paused:
 * false, or a switch from PULL) has its waiting tasks in Redis when the call
 * answers, in their priority lanes. No scheduler runs here, so nothing but the
 * change itself can put them there (the reconciler's sweep used to, seconds later).
 */
import { createKeySpace, createRedis, JobTaker, type RedisClient } from "@tasklane/queue";
import { startAttemptsByIds, takeTasksEnteringHorizon } from "@tasklane/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { createTenant, createTestDatabase, createTestRedis, gql, startGateway, type CreatedTenant, type StartedGateway, type TestDatabase, type TestRedis } from "../helpers/platform.js";

let tdb: TestDatabase;
let redis: TestRedis;
let client: RedisClient;
let gateway: StartedGateway;
let receiver: HttpReceiver;
let worker: AppProcess;
const received = new Set<string>();
const receivedAt = new Map<string, number>();

const as = (t: CreatedTenant) => async <T = Record<string, unknown>>(q: string, v?: Record<string, unknown>) => {
  const res = await gql<T>(gateway.url, q, v, t.apiKey);
  if (res.errors) throw new Error(JSON.stringify(res.errors));
  return res.data as T;
};

const UPSERT = `mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name mode paused } }`;

async function submit(t: CreatedTenant, queue: string, n: number, priority: string): Promise<string[]> {
  const inputs = Array.from({ length: n }, () => ({ type: "job", queue, priority }));
  const data = await as(t)<{ submitTasks: { id: string }[] }>(`mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`, { i: inputs });
  return data.submitTasks.map((x) => x.id);
}

async function queueId(t: CreatedTenant, name: string): Promise<string> {
  const res = await tdb.db.pool.query("SELECT id FROM queues WHERE tenant_id = $1 AND name = $2", [t.tenantId, name]);
  return res.rows[0].id as string;
}

const startedAt = async (ids: string[]) =>
  (await tdb.db.pool.query("SELECT id, started_at FROM tasks WHERE id = ANY($1) AND started_at IS NOT NULL", [ids])).rows.map((r) => (r.started_at as Date).getTime());

beforeAll(async () => {
  tdb = await createTestDatabase("qrun");
  redis = createTestRedis();
  client = createRedis(redis.url);
  receiver = await startReceiver(async (req, res) => {
    const { taskId } = req.json as { taskId: string };
    received.add(taskId);
    receivedAt.set(taskId, Date.now());
    res.writeHead(200).end("{}");
  });
  gateway = await startGateway({ databaseUrl: tdb.url, redis, env: { ALLOW_PRIVATE_TARGETS: "1" } });
  const env = { DATABASE_URL: tdb.url, REDIS_URL: redis.url, REDIS_KEY_PREFIX: redis.prefix, ALLOW_PRIVATE_TARGETS: "1", LOG_LEVEL: "warn" };
  worker = startApp("worker", { ...env, WORKER_CONCURRENCY: "4" });
});

afterAll(async () => {
  await worker?.stop();
  await gateway?.close();
  await receiver?.close();
  client?.disconnect();
  await redis?.cleanup();
  await tdb?.drop();
});

describe("a PUSH queue that starts to run", () => {
  it("after resumeQueue, starts waiting HIGH tasks whose jobs a stale worker took while paused, before LOW tasks submitted after the resume", async () => {
    const t = await createTenant(gateway);
    await as(t)(UPSERT, { i: { name: "sp", mode: "PUSH", endpointUrl: `${receiver.url}/sp`, paused: true } });
    const high = await submit(t, "sp", 40, "HIGH");
    // What a worker whose directory was a second behind the pause did: took the jobs out of
    // Redis, and the start statement refused them (the queue is paused).
    const keys = createKeySpace(redis.prefix);
    const name = keys.bullQueueName(t.tenantId, await queueId(t, "sp"));
    const taken = await new JobTaker(client, keys).take(name, 1000);
    expect(taken.jobs).toHaveLength(40);
    const started = await startAttemptsByIds(tdb.db, taken.jobs.map((j) => j.data.taskId), { workerId: "stale", leaseMs: { timeoutPlusMs: 15_000 }, actor: "worker:stale" });
    expect(started).toHaveLength(0);

    await as(t)(`mutation { resumeQueue(name: "sp") { paused } }`);
    const low = await submit(t, "sp", 10, "LOW");
    await waitFor("every task to start", async () => (await startedAt([...high, ...low])).length === 50, 20_000, 100);
    // Same statement, same now(): a HIGH task may share a LOW one's start time, never come after it.
    expect(Math.max(...(await startedAt(high)))).toBeLessThanOrEqual(Math.min(...(await startedAt(low))));
  }, 40_000);

  it("after upsertQueue paused: false, starts the waiting tasks at once", async () => {
    const t = await createTenant(gateway);
    await as(t)(UPSERT, { i: { name: "up", mode: "PUSH", endpointUrl: `${receiver.url}/up`, paused: true } });
    const ids = await submit(t, "up", 20, "NORMAL");
    const keys = createKeySpace(redis.prefix);
    await new JobTaker(client, keys).take(keys.bullQueueName(t.tenantId, await queueId(t, "up")), 1000);
    await as(t)(UPSERT, { i: { name: "up", mode: "PUSH", endpointUrl: `${receiver.url}/up`, paused: false } });
    await waitFor("every task to be pushed", () => ids.every((id) => received.has(id)), 10_000, 100);
  }, 30_000);

  it("switched from PULL to PUSH, pushes the tasks already waiting", async () => {
    const t = await createTenant(gateway);
    await as(t)(UPSERT, { i: { name: "m", mode: "PULL" } });
    const ids = await submit(t, "m", 30, "NORMAL");
    await as(t)(UPSERT, { i: { name: "m", mode: "PUSH", endpointUrl: `${receiver.url}/m` } });
    await waitFor("every task to be pushed", () => ids.every((id) => received.has(id)), 10_000, 100);
  }, 30_000);

  it("switched from PULL to PUSH, hands its tasks due beyond the dispatch horizon to horizon promotion", async () => {
    const t = await createTenant(gateway);
    await as(t)(UPSERT, { i: { name: "far", mode: "PULL" } });
    // 10 and 20 minutes ahead, past the gateway's 5-minute horizon.
    const data = await as(t)<{ submitTasks: { id: string }[] }>(`mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`, {
      i: [600, 1200].map((delaySeconds) => ({ type: "job", queue: "far", delaySeconds })),
    });
    const ids = data.submitTasks.map((x) => x.id);
    await as(t)(UPSERT, { i: { name: "far", mode: "PUSH", endpointUrl: `${receiver.url}/far` } });
    // What the scheduler's promotion takes once they are within its horizon (here: a horizon reaching them now).
    // Marked handed over while PULL, they were skipped, and only the reconciler's sweep added them, late.
    const promoted = await takeTasksEnteringHorizon(tdb.db, 1_300_000, 10_000);
    expect(promoted.map((p) => p.taskId).filter((id) => ids.includes(id)).sort()).toEqual([...ids].sort());
  }, 30_000);

  it("created a moment ago, starts its first task without waiting for the worker's next directory reload", async () => {
    const t = await createTenant(gateway);
    const waits: number[] = [];
    for (let i = 0; i < 3; i++) {
      // Early reloads are at most one a second: queues created closer together wait for the periodic one.
      if (i > 0) await new Promise((r) => setTimeout(r, 1_100));
      await as(t)(UPSERT, { i: { name: `new${i}`, mode: "PUSH", endpointUrl: `${receiver.url}/new` } });
      const sentAt = Date.now();
      const [id] = await submit(t, `new${i}`, 1, "NORMAL");
      await waitFor("the first task to be pushed", () => receivedAt.has(id as string), 10_000, 10);
      waits.push((receivedAt.get(id as string) as number) - sentAt);
    }
    // Without an early reload the fetcher puts an unknown queue off for a second (IDLE_POLL_MS), so
    // each first task waits more than 1,000 ms; an early reload takes tens of ms (bound generous for load).
    waits.sort((a, b) => a - b);
    expect(waits[1]).toBeLessThan(900);
  }, 30_000);
});
