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
