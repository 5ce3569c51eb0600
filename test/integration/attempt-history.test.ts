/**
 * What a task's record says about its attempts once it has been retried,
 * redriven or timed out: lastError, attempt numbers and outcomes, against a
 * real database (packages/db transitions).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalizeTaskSpec, parseInput, submitTaskInputSchema, type SubmitTaskInput } from "@tasklane/core";
import { completeAttempts, completeLeases, failLease, getTask, redriveTask, startAttemptsFromQueue, submitTasks, type Database } from "@tasklane/db";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { seedTenant } from "../helpers/seed.js";

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
