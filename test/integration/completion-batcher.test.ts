/**
 * The PUSH worker's CompletionBatcher on a real Postgres: one statement
 * records many tenants' outcomes, so one value the database refuses must not
 * fail the others (they would run again after their leases), and the refused
 * one is recorded without its result rather than left to its lease.
 */
import { normalizeTaskSpec, parseInput, submitTaskInputSchema } from "@tasklane/core";
import { createDatabase, getTask, listAttempts, startAttemptsByIds, submitTasks, type Completion } from "@tasklane/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CompletionBatcher } from "../../apps/worker/src/completion-batcher.js";
import { seedPushQueue, seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase("batcher");
});
afterAll(async () => tdb?.drop());

/** `count` PUSH tasks of a new tenant, started (RUNNING) as the worker starts them. */
async function startedTasks(count: number) {
  const { tenantId } = await seedTenant(tdb.db);
  await seedPushQueue(tdb.db, tenantId, "push", "http://127.0.0.1:9/hook");
  const specs = Array.from({ length: count }, (_, i) => normalizeTaskSpec(parseInput(submitTaskInputSchema, { queue: "push", type: `t${i}` }), Date.now()));
  const { tasks } = await submitTasks(tdb.db, tenantId, specs, { horizonMs: 300_000 });
  const started = await startAttemptsByIds(tdb.db, tasks.map((t) => t.id), { workerId: "w", leaseMs: { timeoutPlusMs: 15_000 }, actor: "test" });
  expect(started).toHaveLength(count);
  return { tenantId, started };
}

const completion = (s: { task: { id: string; leaseGeneration: number; workflowId: string | null } }, result: unknown): Completion => ({
  taskId: s.task.id,
  leaseGeneration: s.task.leaseGeneration,
  result,
  workflowId: s.task.workflowId,
});

describe("CompletionBatcher", () => {
  it("records the rest of a batch when one result cannot be stored, and that one as SUCCEEDED without its result, saying why", async () => {
    const a = await startedTasks(1);
    const b = await startedTasks(5);
    // A string with an unpaired surrogate: JSON.stringify escapes it and jsonb refuses the escape.
    const batcher = new CompletionBatcher(tdb.db, "worker:test", async () => undefined, 300_000, 100, 50);
    const outcomes = await Promise.all([
      ...b.started.slice(0, 2).map((s, i) => batcher.complete(completion(s, { n: i }))),
      batcher.complete(completion(a.started[0]!, { a: "\ud800" })),
      ...b.started.slice(2).map((s, i) => batcher.complete(completion(s, { n: i + 2 }))),
    ]);
    expect(outcomes).toEqual([true, true, true, true, true, true]);

    for (const [i, s] of b.started.entries()) expect(await getTask(tdb.db, b.tenantId, s.task.id)).toMatchObject({ status: "SUCCEEDED", result: { n: i } });
    const odd = a.started[0]!.task.id;
    expect(await getTask(tdb.db, a.tenantId, odd)).toMatchObject({ status: "SUCCEEDED", result: null });
    const [attempt] = (await listAttempts(tdb.db, [odd])).get(odd)!;
    expect(attempt).toMatchObject({ outcome: "SUCCEEDED" });
    expect(attempt!.error).toMatch(/^Result not kept: the database refused it \(invalid input syntax for type json\)/);
    const events = await tdb.db.pool.query("SELECT to_status, reason FROM task_events WHERE task_id = $1 ORDER BY id", [odd]);
    expect(events.rows.at(-1)).toEqual({ to_status: "SUCCEEDED", reason: attempt!.error });
  });

  it("still rejects a batch the database failed for a reason of its own (the leases then run out, as before)", async () => {
    const { started } = await startedTasks(2);
    // Postgres unreachable: no statement can run, for any item, and none is recorded without its result.
    const unreachable = createDatabase({ url: "postgresql://postgres@127.0.0.1:1/none", max: 1, applicationName: "batcher-test" });
    const batcher = new CompletionBatcher(unreachable, "worker:test", async () => undefined, 300_000, 100, 50);
    const outcomes = await Promise.allSettled(started.map((s) => batcher.complete(completion(s, { ok: true }))));
    await unreachable.close();
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected"]);
    for (const s of started) expect((await getTask(tdb.db, s.task.tenantId, s.task.id))?.status).toBe("RUNNING");
  });
});
