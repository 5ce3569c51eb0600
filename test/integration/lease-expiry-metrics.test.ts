/**
 * What the scheduler's lease-expiry loop counts, against real Postgres and
 * Redis: a lease that ran out with its executor gone is a lease expiration
 * (TasklaneLeaseExpirationsHigh: executors dying), a PULL attempt that ran to
 * its timeout is a PULL timeout, never both.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalizeTaskSpec, parseInput, submitTaskInputSchema, type SubmitTaskInput } from "@tasklane/core";
import { createLogger, type SchedulerEnv } from "@tasklane/config";
import { startAttemptsByIds, startAttemptsFromQueue, submitTasks, type Database } from "@tasklane/db";
import { createKeySpace, createRedis, createTaskDispatcher } from "@tasklane/queue";
import { expireStaleLeases } from "@tasklane/scheduler/loops/lease-expiry";
import { createSchedulerMetrics, type SchedulerMetrics } from "@tasklane/scheduler/metrics";
import type { Redis } from "ioredis";
import { seedPushQueue, seedTenant } from "../helpers/seed.js";
import { createTestDatabase, uniqueRedisPrefix, type TestDatabase } from "../helpers/test-database.js";

const HORIZON = 300_000;
const prefix = uniqueRedisPrefix("leasexp");
let tdb: TestDatabase;
let db: Database;
let redis: Redis;

const spec = (input: Partial<SubmitTaskInput> & { type: string }) => normalizeTaskSpec(parseInput(submitTaskInputSchema, input), Date.now());
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function submitOne(tenantId: string, input: Partial<SubmitTaskInput> & { type: string }) {
  const { tasks } = await submitTasks(db, tenantId, [spec(input)], { horizonMs: HORIZON });
  return tasks[0]!;
}

async function leaseOne(queueId: string, leaseMs: number) {
  const [lease] = await startAttemptsFromQueue(db, queueId, 1, 60, { workerId: "w1", leaseMs, actor: "test" });
  if (!lease) throw new Error("nothing to lease");
  return lease;
}

/** One pass of the scheduler's loop with fresh metrics; answers what they then read. */
async function sweep() {
  const metrics = createSchedulerMetrics(false);
  const keys = createKeySpace(prefix);
  await expireStaleLeases({
    env: {} as SchedulerEnv,
    db,
    redis,
    keys,
    dispatcher: createTaskDispatcher(redis, keys),
    log: createLogger("test", "silent"),
    horizonMs: HORIZON,
    metrics,
  });
  return read(metrics);
}

async function read(metrics: SchedulerMetrics) {
  const values = await metrics.registry.getMetricsAsJSON();
  const of = (name: string, outcome?: string) =>
    values.find((m) => m.name === name)?.values.find((v) => outcome === undefined || v.labels.outcome === outcome)?.value ?? 0;
  return {
    leaseExpirations: of("tasklane_lease_expirations_total"),
    pullTimedOut: of("tasklane_pull_timeouts_total", "timed_out"),
    pullTimeoutDead: of("tasklane_pull_timeouts_total", "dead"),
  };
}

const outcomeOf = async (taskId: string) =>
  (await db.pool.query("SELECT outcome FROM task_attempts WHERE task_id = $1 ORDER BY id DESC LIMIT 1", [taskId])).rows[0]?.outcome as string;

beforeAll(async () => {
  tdb = await createTestDatabase("leasexp");
  db = tdb.db;
  redis = createRedis("redis://127.0.0.1:6379/0", "test");
});

afterAll(async () => {
  if (redis) {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
  await tdb?.drop();
});

describe("the lease-expiry loop's counters", () => {
  it("counts a PULL attempt that ran to its timeout as a PULL timeout, not as a lease expiration", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    // Leased one at a time, so each lease is the task it was submitted for.
    const retried = await submitOne(tenantId, { type: "slow", maxAttempts: 2, timeoutSeconds: 1 });
    await leaseOne(defaultQueueId, 30_000); // granted up to the 1 s budget only
    const last = await submitOne(tenantId, { type: "slow-last", maxAttempts: 1, timeoutSeconds: 1 });
    await leaseOne(defaultQueueId, 30_000);
    const gone = await submitOne(tenantId, { type: "gone", maxAttempts: 2, timeoutSeconds: 60 });
    await leaseOne(defaultQueueId, 50); // never heartbeated
    await sleep(1_100);
    expect(await sweep()).toEqual({ leaseExpirations: 1, pullTimedOut: 1, pullTimeoutDead: 1 });
    expect([await outcomeOf(retried.id), await outcomeOf(last.id), await outcomeOf(gone.id)]).toEqual(["TIMED_OUT", "TIMED_OUT", "LEASE_EXPIRED"]);
  });

  it("counts a PUSH lease (timeout plus grace) that ran out as a lease expiration, even once its queue was switched to PULL", async () => {
    const { tenantId } = await seedTenant(db);
    const queueId = await seedPushQueue(db, tenantId, "hooks", "https://example.com/hook");
    const task = await submitOne(tenantId, { type: "t", queue: "hooks", maxAttempts: 2, timeoutSeconds: 1 });
    await startAttemptsByIds(db, [task.id], { workerId: "push-1", leaseMs: { timeoutPlusMs: 200 }, actor: "test" });
    // The switch happens while the PUSH worker holds the attempt, then the worker dies.
    await db.pool.query("UPDATE queues SET mode = 'PULL', endpoint_url = NULL WHERE id = $1", [queueId]);
    await sleep(1_300);
    expect(await sweep()).toEqual({ leaseExpirations: 1, pullTimedOut: 0, pullTimeoutDead: 0 });
    expect(await outcomeOf(task.id)).toBe("LEASE_EXPIRED");
  });
});
