/**
 * What a task's record says about its attempts once it has been retried,
 * redriven or timed out: lastError, attempt numbers and outcomes, against a
 * real database (packages/db transitions).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalizeTaskSpec, parseInput, submitTaskInputSchema, type SubmitTaskInput } from "@tasklane/core";
import {
  completeAttempts,
  completeLeases,
  expireLeases,
  extendLease,
  failLease,
  getTask,
  redriveTask,
  returnUndeliveredLeases,
  startAttemptsByIds,
  startAttemptsFromQueue,
  submitTasks,
  type Database,
} from "@tasklane/db";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { seedPushQueue, seedTenant } from "../helpers/seed.js";

const HORIZON = 300_000;
let tdb: TestDatabase;
let db: Database;

const spec = (input: Partial<SubmitTaskInput> & { type: string }) => normalizeTaskSpec(parseInput(submitTaskInputSchema, input), Date.now());

async function submitOne(tenantId: string, input: Partial<SubmitTaskInput> & { type: string }) {
  const { tasks } = await submitTasks(db, tenantId, [spec(input)], { horizonMs: HORIZON });
  return tasks[0]!;
}

async function leaseOne(queueId: string, leaseMs = 30_000) {
  const [lease] = await startAttemptsFromQueue(db, queueId, 1, 60, { workerId: "w1", leaseMs, actor: "test" });
  if (!lease) throw new Error("nothing to lease");
  return lease;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The task's attempts (number, outcome, error) and the reason its lease-expiry event gave. */
async function expiryRecord(taskId: string) {
  const attempts = await db.pool.query("SELECT number, outcome, error FROM task_attempts WHERE task_id = $1 ORDER BY id", [taskId]);
  const events = await db.pool.query("SELECT reason FROM task_events WHERE task_id = $1 AND actor = 'scheduler:lease-expiry' ORDER BY id", [taskId]);
  return { attempts: attempts.rows, reasons: events.rows.map((r) => r.reason as string | null) };
}

beforeAll(async () => {
  tdb = await createTestDatabase("attempts");
  db = tdb.db;
});
afterAll(async () => tdb?.drop());

describe("lastError after a success", () => {
  it("is cleared when a redriven task succeeds (PULL worker's path)", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const task = await submitOne(tenantId, { type: "t", maxAttempts: 1 });
    const l1 = await leaseOne(defaultQueueId);
    const dead = await failLease(db, tenantId, task.id, l1.leaseToken, "boom", true, HORIZON);
    expect(dead.task).toMatchObject({ status: "DEAD", lastError: "boom" });
    await redriveTask(db, tenantId, task.id, "test", HORIZON);
    const l2 = await leaseOne(defaultQueueId);
    const done = await completeLeases(db, tenantId, [{ taskId: task.id, token: l2.leaseToken, result: { ok: true } }], HORIZON);
    expect(done.outcomes[0]).toMatchObject({ task: { status: "SUCCEEDED", lastError: null } });
    expect(await getTask(db, tenantId, task.id)).toMatchObject({ status: "SUCCEEDED", result: { ok: true }, lastError: null });
  });

  it("is cleared when a retry succeeds (PUSH worker's path); the failed attempt keeps its error", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const task = await submitOne(tenantId, { type: "t", maxAttempts: 2, backoff: { strategy: "FIXED", delaySeconds: 0 } });
    const l1 = await leaseOne(defaultQueueId);
    expect((await failLease(db, tenantId, task.id, l1.leaseToken, "flaky", true, HORIZON)).task).toMatchObject({ status: "RETRYING", lastError: "flaky" });
    const l2 = await leaseOne(defaultQueueId);
    const done = await completeAttempts(db, [{ taskId: task.id, leaseGeneration: l2.task.leaseGeneration, result: 1 }], "w1");
    expect(done.accepted[0]).toMatchObject({ status: "SUCCEEDED", lastError: null });
    const history = await db.pool.query("SELECT number, outcome, error FROM task_attempts WHERE task_id = $1 ORDER BY id", [task.id]);
    expect(history.rows).toEqual([
      { number: 1, outcome: "FAILED", error: "flaky" },
      { number: 2, outcome: "SUCCEEDED", error: null },
    ]);
  });
});

describe("a PULL lease that runs out", () => {
  it("is TIMED_OUT when the task's timeoutSeconds elapsed: the lease was capped at the attempt's budget", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const task = await submitOne(tenantId, { type: "t", maxAttempts: 2, timeoutSeconds: 1 });
    // A 30 s lease asked for, granted up to the 1 s budget only.
    const lease = await leaseOne(defaultQueueId, 30_000);
    expect(lease.leaseExpiresAt.getTime() - lease.task.startedAt!.getTime()).toBe(1_000);
    await sleep(1_100);
    await expireLeases(db, 100, HORIZON);
    expect(await getTask(db, tenantId, task.id)).toMatchObject({ status: "QUEUED", lastError: "Timed out after 1 s" });
    expect(await expiryRecord(task.id)).toEqual({ attempts: [{ number: 1, outcome: "TIMED_OUT", error: "Timed out after 1 s" }], reasons: ["Timed out after 1 s"] });
  });

  it("is TIMED_OUT when heartbeats held it to the budget's end, and DEAD once the attempts are spent", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const task = await submitOne(tenantId, { type: "t", maxAttempts: 1, timeoutSeconds: 1 });
    const lease = await leaseOne(defaultQueueId, 300);
    const beat = await extendLease(db, tenantId, task.id, lease.task.leaseGeneration, 60_000);
    expect(beat!.leaseExpiresAt.getTime() - lease.task.startedAt!.getTime()).toBe(1_000);
    await sleep(1_100);
    await expireLeases(db, 100, HORIZON);
    expect(await getTask(db, tenantId, task.id)).toMatchObject({ status: "DEAD", lastError: "Timed out after 1 s" });
    expect((await expiryRecord(task.id)).attempts).toEqual([{ number: 1, outcome: "TIMED_OUT", error: "Timed out after 1 s" }]);
  });

  it("is LEASE_EXPIRED when the worker stopped heartbeating before the budget was spent", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const task = await submitOne(tenantId, { type: "t", maxAttempts: 2, timeoutSeconds: 60 });
    await leaseOne(defaultQueueId, 50);
    await sleep(100);
    await expireLeases(db, 100, HORIZON);
    expect(await getTask(db, tenantId, task.id)).toMatchObject({ status: "QUEUED", lastError: "lease expired" });
    expect(await expiryRecord(task.id)).toEqual({ attempts: [{ number: 1, outcome: "LEASE_EXPIRED", error: "lease expired" }], reasons: ["lease expired"] });
  });

  it("leaves a PUSH lease that runs out LEASE_EXPIRED: the PUSH worker records its own timeouts, so its lease running out means it stopped", async () => {
    const { tenantId } = await seedTenant(db);
    await seedPushQueue(db, tenantId, "hooks", "https://example.com/hook");
    const task = await submitOne(tenantId, { type: "t", queue: "hooks", maxAttempts: 2, timeoutSeconds: 1 });
    // No grace past the timeout: the lease ends exactly at the budget's end.
    const [started] = await startAttemptsByIds(db, [task.id], { workerId: "push-1", leaseMs: { timeoutPlusMs: 0 }, actor: "test" });
    expect(started!.leaseExpiresAt.getTime() - started!.task.startedAt!.getTime()).toBe(1_000);
    await sleep(1_100);
    await expireLeases(db, 100, HORIZON);
    expect((await expiryRecord(task.id)).attempts).toEqual([{ number: 1, outcome: "LEASE_EXPIRED", error: "lease expired" }]);
  });
});

describe("attempt numbers across a redrive", () => {
  it("go on from the last attempt (history and events), while the redrive gives a fresh budget of maxAttempts", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const task = await submitOne(tenantId, { type: "t", maxAttempts: 2, backoff: { strategy: "FIXED", delaySeconds: 0 } });
    const failOnce = async (retryable = true) => {
      const lease = await leaseOne(defaultQueueId);
      return { lease, after: (await failLease(db, tenantId, task.id, lease.leaseToken, `boom ${lease.task.attempts}`, retryable, HORIZON)).task };
    };
    expect((await failOnce()).after.status).toBe("RETRYING");
    expect((await failOnce()).after).toMatchObject({ status: "DEAD", attempts: 2 });

    const redriven = await redriveTask(db, tenantId, task.id, "test", HORIZON);
    expect(redriven.task).toMatchObject({ status: "QUEUED", attempts: 0, maxAttempts: 2 });
    // A fresh budget: the first attempt after the redrive is retried, the second is the last.
    const third = await failOnce();
    expect(third.lease.task.attempts).toBe(1);
    expect(third.after.status).toBe("RETRYING");
    expect((await failOnce()).after).toMatchObject({ status: "DEAD", attempts: 2 });

    const history = await db.pool.query("SELECT number, outcome FROM task_attempts WHERE task_id = $1 ORDER BY id", [task.id]);
    expect(history.rows.map((r) => r.number)).toEqual([1, 2, 3, 4]);
    const events = await db.pool.query("SELECT from_status, to_status, attempt, reason FROM task_events WHERE task_id = $1 ORDER BY id", [task.id]);
    const starts = events.rows.filter((e) => e.to_status === "RUNNING").map((e) => e.attempt);
    expect(starts).toEqual([1, 2, 3, 4]);
    // The redrive's event names the attempt the task died after, not 0.
    expect(events.rows.find((e) => e.reason === "redrive")).toMatchObject({ from_status: "DEAD", to_status: "QUEUED", attempt: 2 });
    expect(events.rows.filter((e) => e.to_status === "DEAD").map((e) => e.attempt)).toEqual([2, 4]);
  });

  it("a lease handed back uncharged after a redrive leaves no gap in the numbers", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const task = await submitOne(tenantId, { type: "t", maxAttempts: 1 });
    const l1 = await leaseOne(defaultQueueId);
    await failLease(db, tenantId, task.id, l1.leaseToken, "boom", true, HORIZON);
    await redriveTask(db, tenantId, task.id, "test", HORIZON);
    const l2 = await leaseOne(defaultQueueId);
    expect(await returnUndeliveredLeases(db, tenantId, [{ taskId: task.id, leaseGeneration: l2.task.leaseGeneration }], "test")).toEqual([task.id]);
    expect(await getTask(db, tenantId, task.id)).toMatchObject({ status: "QUEUED", attempts: 0 });
    const l3 = await leaseOne(defaultQueueId);
    await completeLeases(db, tenantId, [{ taskId: task.id, token: l3.leaseToken, result: null }], HORIZON);
    const history = await db.pool.query("SELECT number, outcome FROM task_attempts WHERE task_id = $1 ORDER BY id", [task.id]);
    expect(history.rows).toEqual([
      { number: 1, outcome: "FAILED" },
      { number: 2, outcome: "SUCCEEDED" },
    ]);
  });
});
