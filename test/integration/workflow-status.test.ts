/**
 * The status a workflow ends with when one of its tasks was cancelled
 * (cancelTask) rather than cancelling the whole workflow, against a real
 * database: CANCELLED, unless a task also ended DEAD (FAILED), even one
 * discarded from the dead-letter queue since.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalizeWorkflowSpec, parseInput, submitWorkflowInputSchema, validateWorkflowGraph } from "@tasklane/core";
import { cancelTask, completeAttempts, discardTask, failAttempt, startAttemptsFromQueue, submitWorkflow, type Database, type StartedAttempt } from "@tasklane/db";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { seedTenant } from "../helpers/seed.js";

const HORIZON = 300_000;
let tdb: TestDatabase;
let db: Database;
let tenantId: string;
let queueId: string;

async function submit(tasks: { key: string; dependsOn?: string[] }[]) {
  const input = parseInput(submitWorkflowInputSchema, { name: "status", tasks: tasks.map((t) => ({ type: "t", ...t })) });
  validateWorkflowGraph(input.tasks);
  const submitted = await submitWorkflow(db, tenantId, normalizeWorkflowSpec(input, Date.now()), { horizonMs: HORIZON });
  return { id: submitted.workflow.id, idOf: (key: string) => submitted.tasks.find((t) => t.key === key)!.task.id };
}

async function lease(n: number): Promise<StartedAttempt[]> {
  const leases = await startAttemptsFromQueue(db, queueId, n, 60, { workerId: "w", leaseMs: 60_000, actor: "test" });
  expect(leases).toHaveLength(n);
  return leases;
}

const complete = (l: StartedAttempt) =>
  completeAttempts(db, [{ taskId: l.task.id, leaseGeneration: l.task.leaseGeneration, result: null, workflowId: l.task.workflowId }], "test");

async function workflowState(id: string) {
  const w = await db.pool.query<{ status: string }>("SELECT status FROM workflows WHERE id = $1", [id]);
  const t = await db.pool.query<{ workflow_key: string; status: string }>("SELECT workflow_key, status FROM tasks WHERE workflow_id = $1", [id]);
  return { status: w.rows[0]!.status, tasks: Object.fromEntries(t.rows.map((r) => [r.workflow_key, r.status])) };
}

beforeAll(async () => {
  tdb = await createTestDatabase("wfstatus");
  db = tdb.db;
  ({ tenantId, defaultQueueId: queueId } = await seedTenant(db));
});

afterAll(async () => {
  await tdb?.drop();
});

describe("a workflow with a task cancelled through cancelTask", () => {
  it("ends CANCELLED once the rest is done when a BLOCKED task was cancelled", async () => {
    const wf = await submit([{ key: "r" }, { key: "m", dependsOn: ["r"] }, { key: "n", dependsOn: ["m"] }, { key: "side", dependsOn: ["r"] }]);
    await cancelTask(db, tenantId, wf.idOf("m"), "test");
    expect(await workflowState(wf.id)).toEqual({ status: "RUNNING", tasks: { r: "QUEUED", m: "CANCELLED", n: "SKIPPED", side: "BLOCKED" } });
    const [root] = await lease(1);
    await complete(root!);
    const [side] = await lease(1);
    const done = await complete(side!);
    expect(done.workflows.finished.map((f) => f.status)).toEqual(["CANCELLED"]);
    expect(await workflowState(wf.id)).toEqual({ status: "CANCELLED", tasks: { r: "SUCCEEDED", m: "CANCELLED", n: "SKIPPED", side: "SUCCEEDED" } });
  });

  it("ends CANCELLED at once when its last running task is cancelled", async () => {
    const wf = await submit([{ key: "only" }, { key: "after", dependsOn: ["only"] }]);
    await lease(1);
    await cancelTask(db, tenantId, wf.idOf("only"), "test");
    expect(await workflowState(wf.id)).toEqual({ status: "CANCELLED", tasks: { only: "CANCELLED", after: "SKIPPED" } });
  });

  it("ends FAILED when another task ended DEAD", async () => {
    const wf = await submit([{ key: "a" }, { key: "b" }, { key: "c", dependsOn: ["a", "b"] }]);
    const leases = await lease(2);
    const a = leases.find((l) => l.task.id === wf.idOf("a"))!;
    await cancelTask(db, tenantId, wf.idOf("b"), "test");
    await failAttempt(
      db,
      { taskId: a.task.id, leaseGeneration: a.task.leaseGeneration, error: "boom", outcome: "FAILED", decision: { kind: "dead", reason: "non_retryable" } },
      "test",
      HORIZON,
    );
    expect(await workflowState(wf.id)).toEqual({ status: "FAILED", tasks: { a: "DEAD", b: "CANCELLED", c: "SKIPPED" } });
  });

  it("ends FAILED when a task died and was discarded (DEAD -> CANCELLED) before the rest finished", async () => {
    const wf = await submit([{ key: "dies" }, { key: "after", dependsOn: ["dies"] }, { key: "other" }]);
    const leases = await lease(2);
    const dies = leases.find((l) => l.task.id === wf.idOf("dies"))!;
    const other = leases.find((l) => l.task.id === wf.idOf("other"))!;
    await failAttempt(
      db,
      { taskId: dies.task.id, leaseGeneration: dies.task.leaseGeneration, error: "boom", outcome: "FAILED", decision: { kind: "dead", reason: "non_retryable" } },
      "test",
      HORIZON,
    );
    await discardTask(db, tenantId, wf.idOf("dies"), "test");
    const done = await complete(other);
    expect(done.workflows.finished.map((f) => f.status)).toEqual(["FAILED"]);
    expect(await workflowState(wf.id)).toEqual({ status: "FAILED", tasks: { dies: "CANCELLED", after: "SKIPPED", other: "SUCCEEDED" } });
  });
});
