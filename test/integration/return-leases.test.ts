import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalizeTaskSpec, parseInput, submitTaskInputSchema } from "@tasklane/core";
import {
  completeAttempts,
  returnInterruptedAttempts,
  returnUndeliveredLeases,
  startAttemptsFromQueue,
  submitTasks,
  type Database,
  type StartedAttempt as TaskLease,
} from "@tasklane/db";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { seedTenant } from "../helpers/seed.js";

// Handing back one lease (a stopping worker, an aborted long poll) must leave every other
// running task alone, though they all share lease generation 1: once, the lock subquery's
// alias captured the caller's, its `id = id` matched every task, and one hand-back revoked
// the running leases of every tenant.

const HORIZON = 300_000;
let tdb: TestDatabase;
let db: Database;

beforeAll(async () => {
  tdb = await createTestDatabase("return_leases");
  db = tdb.db;
});
afterAll(async () => tdb?.drop());

/** Three running tasks of their own for each of two tenants, all on their first lease. */
async function runningTasks(): Promise<{ tenantA: string; a: TaskLease[]; b: TaskLease[] }> {
  const leased: TaskLease[][] = [];
  const tenants: string[] = [];
  for (let n = 0; n < 2; n += 1) {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const specs = [1, 2, 3].map(() => normalizeTaskSpec(parseInput(submitTaskInputSchema, { type: "t" }), Date.now()));
    await submitTasks(db, tenantId, specs, { horizonMs: HORIZON });
    leased.push(await startAttemptsFromQueue(db, defaultQueueId, 3, 60, { workerId: `w${n}`, leaseMs: 600_000, actor: "test" }));
    tenants.push(tenantId);
  }
  const [a, b] = leased as [TaskLease[], TaskLease[]];
  expect(a).toHaveLength(3);
  expect(b).toHaveLength(3);
  expect(new Set([...a, ...b].map((l) => l.task.leaseGeneration))).toEqual(new Set([a[0]!.task.leaseGeneration]));
  return { tenantA: tenants[0] as string, a, b };
}

const statusOf = async (ids: string[]) =>
  (await db.pool.query<{ status: string }>(`SELECT status FROM tasks WHERE id = ANY($1) ORDER BY id`, [ids])).rows.map((r) => r.status);

async function expectStillRunningAndCompletable(leases: TaskLease[]) {
  expect(await statusOf(leases.map((l) => l.task.id))).toEqual(leases.map(() => "RUNNING"));
  const done = await completeAttempts(db, leases.map((l) => ({ taskId: l.task.id, leaseGeneration: l.task.leaseGeneration, result: null })), "test");
  expect(done.refused).toEqual([]);
}

describe("handing back one lease", () => {
  it("returns only that task when a lease was never delivered", async () => {
    const { tenantA, a, b } = await runningTasks();
    const [one, ...rest] = a as [TaskLease, ...TaskLease[]];
    expect(await returnUndeliveredLeases(db, tenantA, [{ taskId: one.task.id, leaseGeneration: one.task.leaseGeneration }], "gateway")).toEqual([one.task.id]);
    expect(await statusOf([one.task.id])).toEqual(["QUEUED"]);
    await expectStillRunningAndCompletable(rest);
    await expectStillRunningAndCompletable(b);
  });

  it("returns only that task when a stopping worker hands back its attempt", async () => {
    const { a, b } = await runningTasks();
    const [one, ...rest] = a as [TaskLease, ...TaskLease[]];
    const back = await returnInterruptedAttempts(db, [{ taskId: one.task.id, leaseGeneration: one.task.leaseGeneration }], "worker:w0", HORIZON);
    expect(back.returned).toEqual([one.task.id]);
    expect(await statusOf([one.task.id])).toEqual(["QUEUED"]);
    await expectStillRunningAndCompletable(rest);
    await expectStillRunningAndCompletable(b);
  });
});
