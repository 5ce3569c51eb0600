/**
 * Redis is a cache of Postgres: whatever of it is lost, every accepted task
 * still runs, once. Real scheduler and worker processes; the faults touch
 * only this file's own key prefix (its wipe is FLUSHDB for that prefix, in
 * one script). Each case checks exact outcomes in Postgres (status, attempts,
 * attempt outcomes) and at the endpoint (one request per attempt that ran).
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { createTenant, createTestDatabase, createTestRedis, gql, startGateway, type CreatedTenant, type StartedGateway, type TestDatabase, type TestRedis } from "../helpers/platform.js";
import { printAppLogsOnFailure, startServingApp } from "../helpers/ready-apps.js";

const HORIZON_SECONDS = 6;

let tdb: TestDatabase;
let testRedis: TestRedis;
let redis: Redis;
let gateway: StartedGateway;
let tenant: CreatedTenant;
let receiver: HttpReceiver;
const apps: AppProcess[] = [];
/** Requests the endpoint holds until the test lets them go, by task id. */
const held = new Map<string, () => void>();
/** Task ids whose requests are held; a request for any other task is answered at once. */
const holdFor = new Set<string>();
/** Task ids whose first attempt answers 500 (retryable). */
const failFirst = new Set<string>();

const env = () => ({
  DATABASE_URL: tdb.url,
  REDIS_URL: testRedis.url,
  REDIS_KEY_PREFIX: testRedis.prefix,
  ALLOW_PRIVATE_TARGETS: "1",
  DISPATCH_HORIZON_SECONDS: String(HORIZON_SECONDS),
  RECONCILE_INTERVAL_SECONDS: "1",
  LOG_LEVEL: "warn",
});

beforeAll(async () => {
  tdb = await createTestDatabase("durredis");
  testRedis = createTestRedis();
  redis = new Redis(testRedis.url, { maxRetriesPerRequest: 1 });
  receiver = await startReceiver((req, res) => {
    const { taskId, attempt } = req.json as { taskId: string; attempt: number };
    if (failFirst.has(taskId) && attempt === 1) {
      res.writeHead(500, { "content-type": "text/plain" }).end("not yet");
      return;
    }
    const answer = () => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ran: taskId, attempt }));
    if (holdFor.has(taskId)) held.set(taskId, answer);
    else answer();
  });
  gateway = await startGateway({ databaseUrl: tdb.url, redis: testRedis, env: { ALLOW_PRIVATE_TARGETS: "1", DISPATCH_HORIZON_SECONDS: String(HORIZON_SECONDS) } });
  tenant = await createTenant(gateway);
  for (const [name, concurrency] of [["push", null], ["paused", null], ["capped", 1]] as const) {
    const res = await api(`mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`, { i: { name, mode: "PUSH", endpointUrl: `${receiver.url}/run`, concurrency } });
    expect(res.errors).toBeUndefined();
  }
  apps.push((await startServingApp("scheduler", env())).app, (await startServingApp("worker", env())).app);
}, 120_000);

afterAll(async () => {
  for (const answer of held.values()) answer();
  await Promise.all(apps.map((a) => a.stop()));
  await gateway?.close();
  await receiver?.close();
  redis?.disconnect();
  await testRedis?.cleanup();
  await tdb?.drop();
});

const api = <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>) => gql<T>(gateway.url, query, variables, tenant.apiKey);

async function submit(inputs: Record<string, unknown>[]): Promise<string[]> {
  const res = await api<{ submitTasks: { id: string }[] }>(`mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`, { i: inputs });
  if (!res.data) throw new Error(JSON.stringify(res.errors));
  return res.data.submitTasks.map((t) => t.id);
}

interface TaskRow {
  id: string;
  status: string;
  attempts: number;
  outcomes: string[];
}

async function rows(ids: string[]): Promise<TaskRow[]> {
  const { rows } = await tdb.db.pool.query<TaskRow>(
    `SELECT t.id, t.status, t.attempts,
            coalesce((SELECT array_agg(a.outcome::text ORDER BY a.number) FROM task_attempts a WHERE a.task_id = t.id), '{}') AS outcomes
       FROM tasks t WHERE t.id = ANY($1) ORDER BY t.id`,
    [ids],
  );
  return rows;
}

const requestsFor = (id: string) => receiver.requests.filter((r) => (r.json as { taskId?: string } | null)?.taskId === id).length;

async function waitAllSucceeded(ids: string[], timeoutMs: number): Promise<number> {
  const from = Date.now();
  await waitFor(`${ids.length} tasks SUCCEEDED`, async () => (await rows(ids)).every((r) => r.status === "SUCCEEDED"), timeoutMs, 100);
  return Date.now() - from;
}

/** Each task SUCCEEDED after exactly `attempts` attempts with these outcomes, its endpoint called once per attempt. */
async function expectEachSucceeded(ids: string[], outcomes: string[]): Promise<void> {
  for (const row of await rows(ids)) {
    expect(row, row.id).toMatchObject({ status: "SUCCEEDED", attempts: outcomes.length, outcomes });
    expect(requestsFor(row.id), row.id).toBe(outcomes.length);
  }
}

/** The keys of this file's tenant queue `name` (BullMQ's layout: `<prefix>:{tenant}.queue:<kind>`). */
async function queueKeys(kind: "delayed" | "prioritized"): Promise<string[]> {
  const keys = await redis.keys(`${testRedis.prefix}:*:${kind}`);
  return keys;
}

describe("durability: Redis loses what it held", () => {
  printAppLogsOnFailure(apps);

  it("a delayed job whose delayed-set entry vanished still runs, once, near its time", async () => {
    const ids = await submit(Array.from({ length: 5 }, (_, i) => ({ type: `near-${i}`, queue: "push", delaySeconds: 3 })));
    // In the delayed set: job hash and entry written together by add-jobs.lua.
    const [delayed] = await waitFor("the delayed set", async () => {
      const keys = await queueKeys("delayed");
      return keys.length > 0 && (await redis.zcard(keys[0]!)) === ids.length ? keys : null;
    }, 10_000, 50);
    // The entries go (a restart that lost the ZADDs, an eviction of the set); the job hashes stay.
    expect(await redis.del(delayed!)).toBe(1);
    const tookMs = await waitAllSucceeded(ids, 20_000);
    console.log(`5 delayed tasks with their delayed-set entries lost: all SUCCEEDED ${tookMs} ms after the loss (due at 3 s)`);
    await expectEachSucceeded(ids, ["SUCCEEDED"]);
  }, 60_000);

  it("delayed jobs of a queue whose entry in the active-queue set vanished still run, once, near their time", async () => {
    const ids = await submit(Array.from({ length: 5 }, (_, i) => ({ type: `unlisted-${i}`, queue: "push", delaySeconds: 3 })));
    await waitFor("the delayed set", async () => {
      const keys = await queueKeys("delayed");
      return keys.length > 0 && (await redis.zcard(keys[0]!)) === ids.length;
    }, 10_000, 50);
    // The set of queues workers look at loses this one (the SADD that followed the jobs was not kept).
    expect(await redis.del(`${testRedis.prefix}:active-queues`)).toBe(1);
    const tookMs = await waitAllSucceeded(ids, 20_000);
    console.log(`5 delayed tasks whose queue left the active set: all SUCCEEDED ${tookMs} ms after the loss (due at 3 s)`);
    await expectEachSucceeded(ids, ["SUCCEEDED"]);
  }, 60_000);

  it("a wipe of every key with tasks RUNNING, due soon, due beyond the horizon, RETRYING, held by a queue's limit and in a paused queue: each runs once, paused stays paused", async () => {
    const paused = await api(`mutation { pauseQueue(name: "paused") { paused } }`);
    expect(paused.data).toEqual({ pauseQueue: { paused: true } });
    const running = await submit(Array.from({ length: 3 }, (_, i) => ({ type: `running-${i}`, queue: "push" })));
    for (const id of running) holdFor.add(id);
    // The capped queue runs one at a time: its first task is held, the second waits for the slot.
    const [cappedFirst] = await submit([{ type: "capped-1", queue: "capped" }]);
    holdFor.add(cappedFirst!);
    await waitFor("the running tasks' requests", () => running.every((id) => held.has(id)) && held.has(cappedFirst!), 20_000, 20);
    const cappedSecond = await submit([{ type: "capped-2", queue: "capped" }]);
    const retrying = await submit(
      Array.from({ length: 2 }, (_, i) => ({ type: `retrying-${i}`, queue: "push", maxAttempts: 3, backoff: { strategy: "FIXED", delaySeconds: 4, jitter: false } })),
    );
    for (const id of retrying) failFirst.add(id);
    await waitFor("the first attempts to fail", async () => (await rows(retrying)).every((r) => r.status === "RETRYING"), 20_000, 50);
    const near = await submit(Array.from({ length: 3 }, (_, i) => ({ type: `near-${i}`, queue: "push", delaySeconds: 3 })));
    const far = await submit(Array.from({ length: 3 }, (_, i) => ({ type: `far-${i}`, queue: "push", delaySeconds: HORIZON_SECONDS + 3 })));
    const inPaused = await submit(Array.from({ length: 3 }, (_, i) => ({ type: `paused-${i}`, queue: "paused" })));
    expect(await redis.exists(`${testRedis.prefix}:epoch`)).toBe(1);

    // FLUSHDB, for this file's keys: jobs, sets, concurrency slots, the epoch.
    const wipedAt = Date.now();
    await testRedis.cleanup();
    await waitFor("the rebuild (a new epoch)", async () => (await redis.exists(`${testRedis.prefix}:epoch`)) === 1, 10_000, 20);
    const rebuiltMs = Date.now() - wipedAt;
    // The capped queue's slot is held again by its running task: its second task must not start beside it.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(requestsFor(cappedSecond[0]!)).toBe(0);
    for (const id of [...running, cappedFirst!]) {
      holdFor.delete(id);
      held.get(id)!();
      held.delete(id);
    }
    const allMs = await waitAllSucceeded([...running, cappedFirst!, ...cappedSecond, ...retrying, ...near, ...far], 40_000);
    await expectEachSucceeded([...running, cappedFirst!, ...cappedSecond, ...near, ...far], ["SUCCEEDED"]);
    await expectEachSucceeded(retrying, ["FAILED", "SUCCEEDED"]);

    // Still paused, its tasks waiting and never sent, a while after everything else finished.
    await new Promise((r) => setTimeout(r, 2_000));
    expect((await api(`query { queue(name: "paused") { paused } }`)).data).toEqual({ queue: { paused: true } });
    for (const row of await rows(inPaused)) expect(row).toMatchObject({ status: "QUEUED", attempts: 0, outcomes: [] });
    expect(inPaused.map(requestsFor)).toEqual([0, 0, 0]);
    await api(`mutation { resumeQueue(name: "paused") { paused } }`);
    await waitAllSucceeded(inPaused, 20_000);
    await expectEachSucceeded(inPaused, ["SUCCEEDED"]);
    console.log(`wipe: epoch rebuilt in ${rebuiltMs} ms; ${running.length + 2 + retrying.length + near.length + far.length} tasks done ${allMs} ms after the held answers went; duplicates 0`);
  }, 120_000);
});
