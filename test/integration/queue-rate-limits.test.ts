/**
 * Queue start rates (token buckets in Redis) as a tenant sees them, PUSH
 * through a real worker process and PULL through leaseTasks: tokens are spent
 * on starts only, so an idle queue keeps its burst.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { createTenant, createTestDatabase, createTestRedis, gql, startGateway, type CreatedTenant, type StartedGateway, type TestDatabase, type TestRedis } from "../helpers/platform.js";

let tdb: TestDatabase;
let redis: TestRedis;
let gateway: StartedGateway;
let receiver: HttpReceiver;
let worker: AppProcess;
/** When the endpoint saw each task. */
const pushedAt = new Map<string, number>();

const as = (t: CreatedTenant) => async <T = Record<string, unknown>>(q: string, v?: Record<string, unknown>) => {
  const res = await gql<T>(gateway.url, q, v, t.apiKey);
  if (res.errors) throw new Error(JSON.stringify(res.errors));
  return res.data as T;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const UPSERT = `mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`;
const LEASE = `mutation ($q: String!, $max: Int, $wait: Float) { leaseTasks(queue: $q, workerId: "w", max: $max, waitSeconds: $wait) { task { id } } }`;

async function submit(t: CreatedTenant, queue: string, n: number): Promise<string[]> {
  const inputs = Array.from({ length: n }, () => ({ type: "job", queue }));
  const data = await as(t)<{ submitTasks: { id: string }[] }>(`mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`, { i: inputs });
  return data.submitTasks.map((x) => x.id);
}

beforeAll(async () => {
  tdb = await createTestDatabase("qrate");
  redis = createTestRedis();
  receiver = await startReceiver(async (req, res) => {
    pushedAt.set((req.json as { taskId: string }).taskId, Date.now());
    res.writeHead(200).end("{}");
  });
  gateway = await startGateway({ databaseUrl: tdb.url, redis, env: { ALLOW_PRIVATE_TARGETS: "1" } });
  const env = { DATABASE_URL: tdb.url, REDIS_URL: redis.url, REDIS_KEY_PREFIX: redis.prefix, ALLOW_PRIVATE_TARGETS: "1", LOG_LEVEL: "warn" };
  worker = startApp("worker", { ...env, WORKER_CONCURRENCY: "20" });
});

afterAll(async () => {
  await worker?.stop();
  await gateway?.close();
  await receiver?.close();
  await redis?.cleanup();
  await tdb?.drop();
});

describe("start tokens are spent on starts only", () => {
  it("PULL: a worker long-polling an empty queue leaves the burst whole, and 10 tasks then lease at once", async () => {
    const t = await createTenant(gateway);
    await as(t)(UPSERT, { i: { name: "rs", mode: "PULL", rateLimit: { perSecond: 1, burst: 10 } } });
    // An idle worker's long polls, each asking for 10: without refunds each took every token there was.
    for (let i = 0; i < 3; i++) expect((await as(t)<{ leaseTasks: unknown[] }>(LEASE, { q: "rs", max: 10, wait: 1 })).leaseTasks).toHaveLength(0);
    await submit(t, "rs", 10);
    const leased = await as(t)<{ leaseTasks: unknown[] }>(LEASE, { q: "rs", max: 10, wait: 0 });
    expect(leased.leaseTasks).toHaveLength(10);
  }, 30_000);

  it("PUSH: a trickle of single tasks leaves the burst whole, and 10 tasks then start at once", async () => {
    const t = await createTenant(gateway);
    await as(t)(UPSERT, { i: { name: "pb", mode: "PUSH", endpointUrl: `${receiver.url}/pb`, rateLimit: { perSecond: 1, burst: 10 } } });
    await sleep(1500);
    // Each single task is fetched by a wave of several picks: the take comes up short and must give the rest back.
    for (let i = 0; i < 3; i++) {
      const [id] = await submit(t, "pb", 1);
      await waitFor("the trickled task to start", () => pushedAt.has(id as string), 10_000, 20);
      await sleep(1000);
    }
    await sleep(1000);
    const sentAt = Date.now();
    const ids = await submit(t, "pb", 10);
    // At 1/s, a bucket that lost its tokens starts a few now and one a second after; a full one starts all 10 now.
    await sleep(2500);
    const soon = ids.filter((id) => (pushedAt.get(id) ?? Infinity) - sentAt < 2500);
    expect(soon).toHaveLength(10);
  }, 40_000);
});

describe("a long poll on a rate-limited queue with a backlog", () => {
  it("PULL: leases the tokens gathered while it waited, not one task per token", async () => {
    const t = await createTenant(gateway);
    // Burst 10: the bucket holds what ~200 ms of 50/s brings (burst 1 would cap every answer at one).
    await as(t)(UPSERT, { i: { name: "rb", mode: "PULL", rateLimit: { perSecond: 50, burst: 10 } } });
    await submit(t, "rb", 50);
    expect((await as(t)<{ leaseTasks: unknown[] }>(LEASE, { q: "rb", max: 50, wait: 0 })).leaseTasks).toHaveLength(10);
    // The burst is spent: the next token is 20 ms away. Waking for it leased one task per call (c9f387a);
    // waiting the poll interval (>= 200 ms) lets 10 gather. A call that finds tokens already there (the
    // time between calls on a loaded machine) answers with those at once, so count the calls the other
    // 40 tasks take: ~40 waking per token, about 4 gathering (a short answer now and then included; on a
    // machine busy with other test files, calls that find a token or two answer with those, once 16).
    let calls = 0;
    for (let leased = 0; leased < 40 && calls < 40; calls++) {
      leased += (await as(t)<{ leaseTasks: unknown[] }>(LEASE, { q: "rb", max: 50, wait: 5 })).leaseTasks.length;
    }
    expect(calls).toBeLessThanOrEqual(25);
  }, 30_000);
});

describe("a long poll on a rate-limited queue whose burst is 1", () => {
  it("PULL: leases at the queue's rate, waking when its token is due rather than at the next poll interval", async () => {
    const t = await createTenant(gateway);
    // A token every 320 ms. Waking in 200 ms steps from the call's start (a round trip after the last
    // lease) looked at ~30 and ~245 ms, found none, and took it at ~460: about two thirds of the rate.
    await as(t)(UPSERT, { i: { name: "r1", mode: "PULL", rateLimit: { perSecond: 1000 / 320, burst: 1 } } });
    await submit(t, "r1", 9);
    const at: number[] = [];
    while (at.length < 9) {
      const n = (await as(t)<{ leaseTasks: unknown[] }>(LEASE, { q: "r1", max: 9, wait: 5 })).leaseTasks.length;
      for (let i = 0; i < n; i++) at.push(Date.now());
    }
    // 8 tokens after the first: 2.56 s at the rate, ~3.7 s stepping by the poll interval.
    expect(at[8]! - at[0]!).toBeLessThan(3_000);
  }, 30_000);
});

describe("many long polls on one rate-limited queue", () => {
  it("PULL: one of them wakes when the bucket is full, not each of them", async () => {
    const t = await createTenant(gateway);
    // A token every 20 ms, burst 1, a backlog: ten polls each waking whenever the bucket was full took
    // ~10 token looks per token.
    await as(t)(UPSERT, { i: { name: "rm", mode: "PULL", rateLimit: { perSecond: 50, burst: 1 } } });
    await submit(t, "rm", 400);
    const queueId = (await tdb.db.pool.query<{ id: string }>("SELECT id FROM queues WHERE tenant_id = $1 AND name = 'rm'", [t.tenantId])).rows[0]!.id;
    const direct = new Redis(redis.url);
    const monitor = await direct.monitor();
    let looks = 0;
    let leased = 0;
    monitor.on("monitor", (_time: string, args: string[]) => {
      if (/^(evalsha|eval|fcall)$/i.test(args[0] ?? "") && args.some((a) => a.includes(queueId))) looks++;
    });
    try {
      const until = Date.now() + 2_000;
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          while (Date.now() < until) leased += (await as(t)<{ leaseTasks: unknown[] }>(LEASE, { q: "rm", max: 1, wait: 1 })).leaseTasks.length;
        }),
      );
    } finally {
      monitor.disconnect();
      direct.disconnect();
    }
    // For up to 3 s: the leader's look per token (50/s), each other waiting call's every 200 ms (9 x 5/s) and
    // each new call's first look (at most one per token): ~420 at most; 276-308 here. With every waiting call
    // waking whenever the bucket was full, ~10 looks per token: 1,007-1,047.
    expect(leased).toBeGreaterThan(0);
    expect(looks).toBeLessThan(600);
  }, 30_000);
});

describe("a rate change applies within about a second", () => {
  it("PULL: a long poll waiting for the old rate's next token leases as soon as the rate is raised", async () => {
    const t = await createTenant(gateway);
    await as(t)(UPSERT, { i: { name: "pr", mode: "PULL", rateLimit: { perSecond: 0.05, burst: 1 } } });
    await submit(t, "pr", 2);
    expect((await as(t)<{ leaseTasks: unknown[] }>(LEASE, { q: "pr", max: 1, wait: 0 })).leaseTasks).toHaveLength(1);
    // The next token is 20 s away; the poll waits up to 12 s.
    const poll = as(t)<{ leaseTasks: unknown[] }>(LEASE, { q: "pr", max: 1, wait: 12 });
    await sleep(700);
    const changedAt = Date.now();
    await as(t)(UPSERT, { i: { name: "pr", mode: "PULL", rateLimit: { perSecond: 100 } } });
    expect((await poll).leaseTasks).toHaveLength(1);
    expect(Date.now() - changedAt).toBeLessThan(5_000);
  }, 30_000);

  it("PUSH: a queue put off until the old rate's next token starts once the rate is raised, or removed", async () => {
    const t = await createTenant(gateway);
    await as(t)(UPSERT, { i: { name: "pu", mode: "PUSH", endpointUrl: `${receiver.url}/pu`, rateLimit: { perSecond: 0.05, burst: 1 } } });
    await sleep(1500);
    const [first, second] = await submit(t, "pu", 2);
    await waitFor("the first task to start", () => pushedAt.has(first as string), 10_000, 20);
    // The second waits for a token 20 s away.
    await sleep(1500);
    expect(pushedAt.has(second as string)).toBe(false);
    let changedAt = Date.now();
    await as(t)(UPSERT, { i: { name: "pu", mode: "PUSH", endpointUrl: `${receiver.url}/pu`, rateLimit: { perSecond: 100 } } });
    await waitFor("the second task to start", () => pushedAt.has(second as string), 15_000, 20);
    expect((pushedAt.get(second as string) as number) - changedAt).toBeLessThan(5_000);

    // A rate of hours per token, then no rate at all.
    await as(t)(UPSERT, { i: { name: "pu", mode: "PUSH", endpointUrl: `${receiver.url}/pu`, rateLimit: { perSecond: 0.0001, burst: 1 } } });
    await sleep(1500);
    const [third, fourth] = await submit(t, "pu", 2);
    await waitFor("one of them to start", () => pushedAt.has(third as string) || pushedAt.has(fourth as string), 10_000, 20);
    await sleep(1500);
    const waiting = pushedAt.has(third as string) ? (fourth as string) : (third as string);
    expect(pushedAt.has(waiting)).toBe(false);
    changedAt = Date.now();
    await as(t)(UPSERT, { i: { name: "pu", mode: "PUSH", endpointUrl: `${receiver.url}/pu`, removeLimits: ["RATE_LIMIT"] } });
    await waitFor("the other to start", () => pushedAt.has(waiting), 15_000, 20);
    expect((pushedAt.get(waiting) as number) - changedAt).toBeLessThan(5_000);
  }, 60_000);
});
