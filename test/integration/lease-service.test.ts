/**
 * LeaseService (gateway) on a real Postgres and Redis: lease calls read their
 * queue at most once a second (PullQueueCache), so a long poll that a
 * submission wakes leases at once and a worker's next call goes straight to
 * the lease statement; a change to the queue made through this gateway
 * applies at once, one made elsewhere within a second. Statements are
 * counted on the lease's own connection (pg_prepared_statements).
 */
import { randomBytes } from "node:crypto";
import { normalizeTaskSpec, parseInput, submitTaskInputSchema } from "@tasklane/core";
import { createDatabase, submitTasks, type Database } from "@tasklane/db";
import { createKeySpace, createRedis, FleetLimits } from "@tasklane/queue";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeaseService, type LeaseArgs } from "../../apps/gateway/src/services/lease-service.js";
import { PullDoorbell } from "../../apps/gateway/src/services/pull-doorbell.js";
import { PullQueueCache } from "../../apps/gateway/src/services/pull-queue-cache.js";
import { QueueService } from "../../apps/gateway/src/services/queue-service.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { seedTenant } from "../helpers/seed.js";

const REDIS_URL = "redis://127.0.0.1:6379/0";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let t: TestDatabase;
/** The lease service's only connection, so its statements can be counted. */
let single: Database;
const prefix = `tl-lease-${randomBytes(4).toString("hex")}`;
const publisher = createRedis(REDIS_URL, "lease-test-pub");
const subscriber = createRedis(REDIS_URL, "lease-test-sub");
const doorbell = new PullDoorbell(publisher, subscriber, `${prefix}:pull-doorbell`);
let leases: LeaseService;
let queues: QueueService;

/** Executions of the prepared statements of the lease's connection whose text matches `pattern` (a POSIX regex). */
async function executions(pattern: string): Promise<number> {
  const res = await single.pool.query<{ n: string }>(
    "SELECT coalesce(sum(generic_plans + custom_plans), 0) AS n FROM pg_prepared_statements WHERE statement ~ $1",
    [pattern],
  );
  return Number(res.rows[0]?.n ?? 0);
}

/** Any read of a queue by its name. */
const QUEUE_READ = "FROM queues.*name = \\$2";
const args = (queue: string, waitSeconds = 5): LeaseArgs => ({ queue, workerId: "w", max: 10, leaseSeconds: 30, waitSeconds, startAheadMs: 0 });

async function submitOne(tenantId: string, queue: string, delaySeconds?: number): Promise<string> {
  const spec = normalizeTaskSpec(parseInput(submitTaskInputSchema, { type: "t", queue, delaySeconds }), Date.now());
  const { tasks } = await submitTasks(t.db, tenantId, [spec], { horizonMs: 60_000 });
  return tasks[0]!.id;
}

beforeAll(async () => {
  t = await createTestDatabase("lease");
  single = createDatabase({ url: t.url, max: 1, applicationName: "tasklane-test" });
  const pullQueues = new PullQueueCache(single);
  queues = new QueueService(t.db, { allowPrivateTargets: true, pullQueues });
  leases = new LeaseService({
    db: single,
    doorbell,
    dispatch: async () => undefined,
    horizonMs: 60_000,
    agingSeconds: 60,
    limits: new FleetLimits(publisher, createKeySpace(prefix)),
    queues: pullQueues,
  });
  // The first arm() subscribes; rings reach the service once that is done.
  const first = doorbell.arm("que_warm");
  await first.wait(1);
  first.disarm();
});

afterAll(async () => {
  doorbell.close();
  publisher.disconnect();
  await single?.close();
  await t?.drop();
});

describe("LeaseService", () => {
  it("leases a task whose doorbell rang while it waited, without reading the queue again", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(t.db);
    const readsBefore = await executions(QUEUE_READ);
    const leasing = leases.lease(tenantId, args("default"));
    await sleep(150); // the call has found nothing and waits on the doorbell
    const submitted = await submitOne(tenantId, "default");
    await doorbell.ring([defaultQueueId]);
    const leased = await leasing;
    expect(leased.map((l) => [l.task.id, l.task.queueName])).toEqual([[submitted, "default"]]);
    // One read when the call began; the wake-up, well within a second of it, leased straight away.
    expect((await executions(QUEUE_READ)) - readsBefore).toBe(1);
  });

  it("reads the queue once for a worker's calls within a second, however many", async () => {
    const { tenantId } = await seedTenant(t.db);
    await submitOne(tenantId, "default");
    await submitOne(tenantId, "default");
    const readsBefore = await executions(QUEUE_READ);
    expect(await leases.lease(tenantId, args("default", 0))).toHaveLength(2);
    expect(await leases.lease(tenantId, args("default", 0))).toEqual([]);
    expect(await leases.lease(tenantId, args("default", 0))).toEqual([]);
    expect((await executions(QUEUE_READ)) - readsBefore).toBe(1);
  });

  it("applies a change made through this gateway at once: a queue turned PUSH is refused on the next call", async () => {
    const { tenantId } = await seedTenant(t.db);
    expect(await leases.lease(tenantId, args("default", 0))).toEqual([]);
    await queues.upsert(tenantId, { name: "default", mode: "PUSH", endpointUrl: "http://127.0.0.1:9/hook" });
    await expect(leases.lease(tenantId, args("default", 0))).rejects.toThrow(/is a PUSH queue/);
  });

  it("gathers delayed tasks in a long poll: it leases once one is due within half its look-ahead, with all due within the whole", async () => {
    const { tenantId } = await seedTenant(t.db);
    const ahead = (waitSeconds: number): LeaseArgs => ({ ...args("default", waitSeconds), startAheadMs: 1_000 });
    const startedAt = Date.now();
    const first = await submitOne(tenantId, "default", 0.9);
    const second = await submitOne(tenantId, "default", 1.3);
    // Both are within the look-ahead; neither is within half of it yet, so a waiting call waits.
    const leased = await leases.lease(tenantId, ahead(5));
    const waited = Date.now() - startedAt;
    expect(leased.map((l) => l.task.id)).toEqual([first, second]);
    // Leased once the first was due within 500 ms (it was submitted due in 900), not at once;
    // and still ahead of both (each held until its runAt).
    expect(waited).toBeGreaterThanOrEqual(350);
    expect(leased.every((l) => l.startInMs > 0)).toBe(true);
  });

  it("a lease call that does not wait takes every task its look-ahead holds, at once", async () => {
    const { tenantId } = await seedTenant(t.db);
    const id = await submitOne(tenantId, "default", 0.9);
    const leased = await leases.lease(tenantId, { ...args("default", 0), startAheadMs: 1_000 });
    expect(leased.map((l) => l.task.id)).toEqual([id]);
    expect(leased[0]!.startInMs).toBeGreaterThan(500);
  });

  it("applies a change made elsewhere during a long poll within a second: a queue turned PUSH is refused", async () => {
    const { tenantId } = await seedTenant(t.db);
    const startedAt = Date.now();
    const leasing = leases.lease(tenantId, args("default")).then(
      () => "leased",
      (error: unknown) => error,
    );
    await sleep(100);
    await t.db.pool.query("UPDATE queues SET mode = 'PUSH', endpoint_url = 'http://127.0.0.1:9/hook' WHERE tenant_id = $1 AND name = 'default'", [tenantId]);
    const outcome = await leasing;
    expect(outcome).toMatchObject({ message: expect.stringContaining("is a PUSH queue") });
    // The cached row expires after a second; the next look (every POLL_MS at most) reads the change.
    expect(Date.now() - startedAt).toBeLessThan(3_000);
  });
});

describe("start tokens of a rate-limited queue", () => {
  const limits = () => new FleetLimits(publisher, createKeySpace(prefix));
  /** A service on the test's Redis prefix whose limits and database the case can bend. */
  const service = (over: Partial<ConstructorParameters<typeof LeaseService>[0]>) =>
    new LeaseService({ db: single, doorbell, dispatch: async () => undefined, horizonMs: 60_000, agingSeconds: 60, limits: limits(), queues: new PullQueueCache(single), ...over });
  /** Tokens in the bucket now (taken, then given back). 0.001/s: nothing refills during the case. */
  async function tokensLeft(tenantId: string, queueId: string): Promise<number> {
    const { granted } = await limits().takeStartTokens(tenantId, queueId, 0.001, 5, 5);
    await limits().returnStartTokens(tenantId, queueId, 0.001, 5, granted);
    return granted;
  }
  async function rateLimitedQueue(): Promise<{ tenantId: string; queueId: string }> {
    const { tenantId } = await seedTenant(t.db);
    const q = await queues.upsert(tenantId, { name: "rated", mode: "PULL", rateLimit: { perSecond: 0.001, burst: 5 } });
    for (let i = 0; i < 3; i++) await submitOne(tenantId, "rated");
    return { tenantId, queueId: q.id };
  }

  it("gives back the tokens of leases handed back because the caller went away", async () => {
    const { tenantId, queueId } = await rateLimitedQueue();
    const abort = new AbortController();
    const bent = limits();
    // The caller goes away while its tasks are being leased (after the tokens were taken).
    const take = bent.takeStartTokens.bind(bent);
    bent.takeStartTokens = async (...a) => {
      const r = await take(...a);
      abort.abort();
      return r;
    };
    expect(await service({ limits: bent }).lease(tenantId, args("rated", 1), abort.signal)).toEqual([]);
    await sleep(50); // the refund is not awaited
    expect(await tokensLeft(tenantId, queueId)).toBe(5);
  });

  it("gives back the tokens of a lease whose statement failed", async () => {
    const { tenantId, queueId } = await rateLimitedQueue();
    const fail = () => Promise.reject(new Error("database unavailable"));
    const broken = { ...single, pool: { query: fail, connect: fail } } as unknown as Database;
    await expect(service({ db: broken }).lease(tenantId, args("rated", 0))).rejects.toThrow("database unavailable");
    await sleep(50);
    expect(await tokensLeft(tenantId, queueId)).toBe(5);
  });

  it("reports a refund Redis refused instead of dropping it silently", async () => {
    const { tenantId } = await rateLimitedQueue();
    const bent = limits();
    bent.returnStartTokens = () => Promise.reject(new Error("redis down"));
    const reported: unknown[] = [];
    // Asks for 10, 5 tokens granted, 3 tasks leased: 2 to give back.
    await service({ limits: bent, onRefundError: (error) => reported.push(error) }).lease(tenantId, args("rated", 0));
    await sleep(50);
    expect(reported).toEqual([expect.objectContaining({ message: "redis down" })]);
  });
});
