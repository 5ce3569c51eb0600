/**
 * How much of its parents' results a workflow task is handed as it starts
 * (packages/db start-attempts, MAX_INLINE_PARENT_RESULTS_BYTES), against a
 * real database. A join of 1,100 parents of 256,000 B each once failed its
 * start statement (past jsonb's 255 MiB ceiling), and with it every lease of
 * its queue; five such parents are enough to pass the bound, so these tests
 * write about 1.5 MB instead of 280 MB.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ANSWER_BODY_BYTES,
  MAX_INLINE_PARENT_RESULTS_BYTES,
  MAX_RESULT_BYTES,
  normalizeTaskSpec,
  normalizeWorkflowSpec,
  parseInput,
  submitTaskInputSchema,
  submitWorkflowInputSchema,
  validateWorkflowGraph,
} from "@tasklane/core";
import { completeAttempts, startAttemptsByIds, startAttemptsFromQueue, submitTasks, submitWorkflow, type Database } from "@tasklane/db";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { seedPushQueue, seedTenant } from "../helpers/seed.js";

const HORIZON = 300_000;
/** A result near MAX_RESULT_BYTES: 256,002 B as stored JSON text (the quotes count). */
const BIG = "x".repeat(256_000);
const BIG_BYTES = BIG.length + 2;
let tdb: TestDatabase;
let db: Database;
let tenantId: string;
let pullQueueId: string;

/** Submits parents (PULL) and a join on `joinQueue` depending on all of them, runs the parents with `results`; answers the join's id. */
async function joinAfter(results: Record<string, unknown>, joinQueue: string): Promise<{ joinId: string; parentIds: Record<string, string> }> {
  const keys = Object.keys(results);
  const input = parseInput(submitWorkflowInputSchema, {
    name: "big-parents",
    tasks: [...keys.map((key) => ({ key, type: "parent" })), { key: "join", type: "join", queue: joinQueue, dependsOn: keys }],
  });
  validateWorkflowGraph(input.tasks);
  const submitted = await submitWorkflow(db, tenantId, normalizeWorkflowSpec(input, Date.now()), { horizonMs: HORIZON });
  const leases = await startAttemptsFromQueue(db, pullQueueId, keys.length, 60, { workerId: "w", leaseMs: 60_000, actor: "test" });
  expect(leases).toHaveLength(keys.length);
  const keyOf = new Map(submitted.tasks.map((t) => [t.task.id, t.key]));
  const done = await completeAttempts(
    db,
    leases.map((l) => ({ taskId: l.task.id, leaseGeneration: l.task.leaseGeneration, result: results[keyOf.get(l.task.id)!], workflowId: l.task.workflowId })),
    "test",
  );
  expect(done.accepted).toHaveLength(keys.length);
  const parentIds = Object.fromEntries(submitted.tasks.filter((t) => t.key !== "join").map((t) => [t.key, t.task.id]));
  return { joinId: submitted.tasks.find((t) => t.key === "join")!.task.id, parentIds };
}

const omitted = (taskId: string, resultBytes: number) => ({ resultOmitted: true, taskId, resultBytes });

beforeAll(async () => {
  tdb = await createTestDatabase("wfparents");
  db = tdb.db;
  ({ tenantId, defaultQueueId: pullQueueId } = await seedTenant(db));
  await seedPushQueue(db, tenantId, "push", "http://127.0.0.1:9/never");
});

afterAll(async () => {
  await tdb?.drop();
});

describe("a workflow task whose parents' results are large", () => {
  it("starts on a PULL queue with results up to the bound and markers past it, leased beside other tasks", async () => {
    // Five near-maximal results pass the bound: four fit, the fifth does not.
    expect(4 * BIG_BYTES).toBeLessThanOrEqual(MAX_INLINE_PARENT_RESULTS_BYTES);
    expect(5 * MAX_RESULT_BYTES).toBeGreaterThan(MAX_INLINE_PARENT_RESULTS_BYTES);
    const results = { p0: BIG, p1: BIG, p2: BIG, p3: BIG, p4: BIG };
    const { joinId, parentIds } = await joinAfter(results, "default");
    const spec = normalizeTaskSpec(parseInput(submitTaskInputSchema, { type: "ordinary" }), Date.now());
    const { tasks: ordinary } = await submitTasks(db, tenantId, [spec, spec], { horizonMs: HORIZON });

    const leases = await startAttemptsFromQueue(db, pullQueueId, 10, 60, { workerId: "w", leaseMs: 60_000, actor: "test" });
    expect(leases.map((l) => l.task.id).sort()).toEqual([joinId, ...ordinary.map((t) => t.id)].sort());
    const join = leases.find((l) => l.task.id === joinId)!;
    expect(join.parents).toEqual({ p0: BIG, p1: BIG, p2: BIG, p3: BIG, p4: omitted(parentIds.p4!, BIG_BYTES) });
    expect(JSON.stringify(join.parents).length).toBeLessThanOrEqual(MAX_INLINE_PARENT_RESULTS_BYTES + 1024);
    expect(leases.filter((l) => l.task.id !== joinId).every((l) => l.parents === undefined)).toBe(true);
    // The result left out is still the parent's own, for the handler to read through task(id).
    const kept = await db.pool.query<{ result: unknown }>("SELECT result FROM tasks WHERE id = $1", [parentIds.p4]);
    expect(kept.rows[0]!.result).toBe(BIG);
  });

  it("hands parents over in key order until the bound on PUSH, and leaves out every later one, small ones included", async () => {
    const medium = "m".repeat(30_000);
    const small = { rows: 3 };
    const results = { b0: BIG, b1: BIG, b2: BIG, b3: BIG, b4: BIG, a: medium, z: small };
    const { joinId, parentIds } = await joinAfter(results, "push");
    const started = await startAttemptsByIds(db, [joinId], { workerId: "push-w", leaseMs: { timeoutPlusMs: 5_000 }, actor: "test" });
    expect(started).toHaveLength(1);
    const smallBytes = JSON.stringify(small).length + 1; // stored text is {"rows": 3}
    expect(started[0]!.parents).toEqual({
      a: medium,
      b0: BIG,
      b1: BIG,
      b2: BIG,
      // a's bytes put b3 past the bound; the prefix stops there, so z is left out too.
      b3: omitted(parentIds.b3!, BIG_BYTES),
      b4: omitted(parentIds.b4!, BIG_BYTES),
      z: omitted(parentIds.z!, smallBytes),
    });
  });

  it("still hands a small fan-in every result, nulls included", async () => {
    const { joinId } = await joinAfter({ x: { n: 1 }, y: null, w: "text" }, "push");
    const started = await startAttemptsByIds(db, [joinId], { workerId: "push-w", leaseMs: { timeoutPlusMs: 5_000 }, actor: "test" });
    expect(started[0]!.parents).toEqual({ x: { n: 1 }, y: null, w: "text" });
  });

  it("a lease counts its tasks' inline parents against its 4 MiB with their payloads: joins sharing 1 MB of parents lease four at a time", async () => {
    // Ten joins over the same four near-maximal parents: 1 MB of results written, ~1 MB inline in each join.
    const parents = ["q0", "q1", "q2", "q3"];
    const joins = Array.from({ length: 10 }, (_, n) => `j${n}`);
    const input = parseInput(submitWorkflowInputSchema, {
      name: "shared-parents",
      tasks: [...parents.map((key) => ({ key, type: "parent" })), ...joins.map((key) => ({ key, type: "join", dependsOn: parents }))],
    });
    validateWorkflowGraph(input.tasks);
    await submitWorkflow(db, tenantId, normalizeWorkflowSpec(input, Date.now()), { horizonMs: HORIZON });
    const started = await startAttemptsFromQueue(db, pullQueueId, 4, 60, { workerId: "w", leaseMs: 60_000, actor: "test" });
    expect(started).toHaveLength(4);
    const done = await completeAttempts(
      db,
      started.map((l) => ({ taskId: l.task.id, leaseGeneration: l.task.leaseGeneration, result: BIG, workflowId: l.task.workflowId })),
      "test",
    );
    expect(done.accepted).toHaveLength(4);

    const sizes: number[] = [];
    for (let n = 0; n < 4; n++) {
      const leases = await startAttemptsFromQueue(db, pullQueueId, 100, 60, { workerId: "w", leaseMs: 60_000, actor: "test" });
      if (leases.length === 0) break;
      expect(leases.every((l) => Object.values(l.parents ?? {}).every((r) => r === BIG))).toBe(true);
      expect(JSON.stringify(leases.map((l) => [l.task.payload, l.parents])).length).toBeLessThanOrEqual(ANSWER_BODY_BYTES + 64 * 1024);
      sizes.push(leases.length);
    }
    // Without the bound: one lease of all ten (10 MB).
    expect(sizes).toEqual([4, 4, 2]);
  });
});
