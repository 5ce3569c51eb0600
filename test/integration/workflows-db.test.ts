/**
 * Workflow transitions at the database level, with no processes around:
 * - the release of a child whose last parents finish at the same moment, in
 *   separate transactions on separate connections, happens exactly once (one
 *   BLOCKED -> QUEUED event, one dispatch outbox row, one dispatch intent);
 * - a chain of 1,000 tasks runs link by link, driven like a pull worker, so
 *   its critical path is the release inside each completion;
 * - a fan-in's completions, one at a time, do not each walk the parents that
 *   already succeeded (Postgres' own count of index entries read says so);
 * - a submission reads no task back (Postgres behind a proxy that counts what
 *   it sends).
 * The rest (real execution, failures, cancellation, the API) is workflows.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalizeWorkflowSpec, parseInput, submitWorkflowInputSchema, validateWorkflowGraph } from "@tasklane/core";
import { completeAttempts, createDatabase, startAttemptsFromQueue, submitWorkflow, type Database, type StartedAttempt } from "@tasklane/db";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { startTcpProxy } from "../helpers/tcp-proxy.js";
import { seedPushQueue, seedTenant } from "../helpers/seed.js";

const HORIZON = 300_000;
const ROUNDS = 200;
let tdb: TestDatabase;
/** Two pools: each completion runs on its own connection, as two worker processes would. */
let dbA: Database;
let dbB: Database;
let tenantId: string;
let pullQueueId: string;

function spec(tasks: { key: string; queue?: string; dependsOn?: string[] }[]) {
  const input = parseInput(submitWorkflowInputSchema, { name: "race", tasks: tasks.map((t) => ({ type: "t", ...t })) });
  validateWorkflowGraph(input.tasks);
  return normalizeWorkflowSpec(input, Date.now());
}

async function leaseParents(n: number): Promise<StartedAttempt[]> {
  const leases = await startAttemptsFromQueue(dbA, pullQueueId, n, 60, { workerId: "w", leaseMs: 60_000, actor: "test" });
  expect(leases).toHaveLength(n);
  return leases;
}

async function releaseCounts(childId: string) {
  const ev = await dbA.pool.query("SELECT count(*)::int AS n FROM task_events WHERE task_id = $1 AND from_status = 'BLOCKED' AND to_status = 'QUEUED'", [childId]);
  const ob = await dbA.pool.query("SELECT count(*)::int AS n FROM outbox WHERE $1 = ANY(task_ids) AND kind = 'DISPATCH_TASK'", [childId]);
  const st = await dbA.pool.query<{ status: string }>("SELECT status FROM tasks WHERE id = $1", [childId]);
  return { events: ev.rows[0].n as number, outbox: ob.rows[0].n as number, status: st.rows[0]?.status };
}

beforeAll(async () => {
  tdb = await createTestDatabase("wfrace");
  dbA = tdb.db;
  dbB = createDatabase({ url: tdb.url, max: 2, applicationName: "tasklane-test-b" });
  const seeded = await seedTenant(dbA);
  tenantId = seeded.tenantId;
  pullQueueId = seeded.defaultQueueId;
  // The child is a PUSH task so its release also writes a dispatch outbox row (nothing drains it here).
  await seedPushQueue(dbA, tenantId, "push", "http://127.0.0.1:9/never");
});

afterAll(async () => {
  await dbB?.close();
  await tdb?.drop();
});

describe("releasing a child whose parents finish at the same moment", () => {
  it(`releases it exactly once, ${ROUNDS} times over`, async () => {
    let overlapped = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const submitted = await submitWorkflow(
        dbA,
        tenantId,
        spec([{ key: "left" }, { key: "right" }, { key: "child", queue: "push", dependsOn: ["left", "right"] }]),
        { horizonMs: HORIZON },
      );
      const child = submitted.tasks.find((t) => t.key === "child")!.task;
      expect(child.status).toBe("BLOCKED");
      const [p1, p2] = await leaseParents(2);
      // Routed by the lease's workflow id, as the worker and completeTask do.
      const [a, b] = await Promise.all([
        completeAttempts(dbA, [{ taskId: p1!.task.id, leaseGeneration: p1!.task.leaseGeneration, result: { side: 1 }, workflowId: p1!.task.workflowId }], "test"),
        completeAttempts(dbB, [{ taskId: p2!.task.id, leaseGeneration: p2!.task.leaseGeneration, result: { side: 2 }, workflowId: p2!.task.workflowId }], "test"),
      ]);
      expect([...a.accepted, ...b.accepted]).toHaveLength(2);
      const intents = [...a.dispatch, ...b.dispatch].filter((d) => d.taskId === child.id);
      expect(intents, `round ${round}`).toHaveLength(1);
      expect(await releaseCounts(child.id), `round ${round}`).toEqual({ events: 1, outbox: 1, status: "QUEUED" });
      // now() is the transaction's start: both within 1 ms means the two really ran side by side.
      const commits = await dbA.pool.query<{ at: Date }>(
        "SELECT at FROM task_events WHERE task_id = ANY($1::text[]) AND to_status = 'SUCCEEDED'",
        [[p1!.task.id, p2!.task.id]],
      );
      const [t1, t2] = commits.rows.map((r) => r.at.getTime());
      if (t1 !== undefined && t2 !== undefined && Math.abs(t1 - t2) <= 1) overlapped++;
    }
    // Not an assertion on timing luck, just evidence in the output that the race was exercised.
    console.info(`workflow release race: ${overlapped}/${ROUNDS} rounds started both completions within 1 ms`);
  });

  it("releases it once when the last parents complete in one batch (callers that give no workflow hint)", async () => {
    const submitted = await submitWorkflow(
      dbA,
      tenantId,
      spec([{ key: "a" }, { key: "b" }, { key: "c" }, { key: "join", queue: "push", dependsOn: ["a", "b", "c"] }]),
      { horizonMs: HORIZON },
    );
    const join = submitted.tasks.find((t) => t.key === "join")!.task;
    const leases = await leaseParents(3);
    const [first, ...rest] = leases;
    const one = await completeAttempts(dbA, [{ taskId: first!.task.id, leaseGeneration: first!.task.leaseGeneration, result: 1 }], "test");
    expect(one.dispatch).toEqual([]);
    const done = await completeAttempts(
      dbB,
      rest.map((l) => ({ taskId: l.task.id, leaseGeneration: l.task.leaseGeneration, result: 2 })),
      "test",
    );
    expect(done.dispatch.map((d) => d.taskId)).toEqual([join.id]);
    expect(await releaseCounts(join.id)).toEqual({ events: 1, outbox: 1, status: "QUEUED" });
  });
});

describe("a chain of 1,000 tasks", () => {
  it("completes, each task started with its predecessor's result", async () => {
    const N = 1000;
    const started = Date.now();
    const submitted = await submitWorkflow(
      dbA,
      tenantId,
      spec(Array.from({ length: N }, (_, i) => ({ key: `s${i}`, dependsOn: i === 0 ? [] : [`s${i - 1}`] }))),
      { horizonMs: HORIZON },
    );
    const submitMs = Date.now() - started;
    for (let i = 0; i < N; i++) {
      const leases = await startAttemptsFromQueue(dbA, pullQueueId, 5, 60, { workerId: "chain", leaseMs: 60_000, actor: "test" });
      // Only the next link is ever runnable: its predecessor's completion released it.
      expect(leases, `link ${i}`).toHaveLength(1);
      const [lease] = leases;
      const n = i === 0 ? 1 : ((lease!.parents?.[`s${i - 1}`] as { n: number } | undefined)?.n ?? NaN) + 1;
      const done = await completeAttempts(dbA, [{ taskId: lease!.task.id, leaseGeneration: lease!.task.leaseGeneration, result: { n }, workflowId: lease!.task.workflowId }], "test");
      expect(done.accepted).toHaveLength(1);
      if (i === N - 1) expect(done.workflows.finished.map((f) => [f.id, f.status])).toEqual([[submitted.workflow.id, "SUCCEEDED"]]);
    }
    const ms = Date.now() - started;
    console.info(`1,000-task chain: submitted in ${submitMs} ms, finished in ${ms} ms (${(ms / N).toFixed(1)} ms per link)`);
    const wf = await dbA.pool.query<{ status: string; n: number }>(
      "SELECT w.status, (SELECT (result->>'n')::int FROM tasks WHERE workflow_id = w.id AND workflow_key = $2) AS n FROM workflows w WHERE w.id = $1",
      [submitted.workflow.id, `s${N - 1}`],
    );
    expect(wf.rows[0]).toEqual({ status: "SUCCEEDED", n: N });
  }, 120_000);
});

describe("a fan-in of 250 parents completed one at a time", () => {
  it("does not walk the parents that already succeeded at each completion", async () => {
    const N = 250;
    const parents = Array.from({ length: N }, (_, i) => `p${i}`);
    const submitted = await submitWorkflow(dbA, tenantId, spec([...parents.map((key) => ({ key })), { key: "join", dependsOn: parents }]), { horizonMs: HORIZON });
    const join = submitted.tasks.find((t) => t.key === "join")!.task;
    // Entries read from the index the walk over a child's parents uses, as Postgres counts them.
    const walked = async () => {
      await dbA.pool.query("SELECT pg_stat_clear_snapshot()");
      const res = await dbA.pool.query<{ n: string }>(
        "SELECT idx_tup_read::text AS n FROM pg_stat_user_indexes WHERE indexrelname = 'workflow_edges_workflow_id_child_key_idx'",
      );
      return Number(res.rows[0]?.n);
    };
    // Its own connection, closed at the end: a backend's counts reach the statistics when it exits.
    const fanIn = createDatabase({ url: tdb.url, max: 1, applicationName: "tasklane-test-fan-in" });
    const before = await walked();
    try {
      const leases: StartedAttempt[] = [];
      while (leases.length < N) {
        const more = await startAttemptsFromQueue(fanIn, pullQueueId, N - leases.length, 60, { workerId: "fan-in", leaseMs: 60_000, actor: "test" });
        expect(more.length).toBeGreaterThan(0);
        leases.push(...more);
      }
      for (const l of leases) {
        await completeAttempts(fanIn, [{ taskId: l.task.id, leaseGeneration: l.task.leaseGeneration, result: null, workflowId: l.task.workflowId }], "test");
      }
    } finally {
      await fanIn.close();
    }
    expect(await releaseCounts(join.id)).toEqual({ events: 1, outbox: 0, status: "QUEUED" });
    // The exiting backend reports its counts shortly after the close.
    let after = await walked();
    for (let settled = 0; settled < 3; ) {
      await new Promise((r) => setTimeout(r, 150));
      const now = await walked();
      settled = now === after ? settled + 1 : 0;
      after = now;
    }
    // Each completion walking every parent that succeeded before it read ~31,000 (250 x 249 / 2).
    expect(after - before).toBeLessThan(5_000);
  }, 60_000);
});

describe("submitting a workflow", () => {
  it("reads none of its tasks back: the caller has their bodies, and the answer reads what it asks for", async () => {
    const proxy = await startTcpProxy("127.0.0.1", Number(new URL(tdb.url).port || 5432));
    const proxied = createDatabase({ url: proxy.rewrite(tdb.url), max: 1 });
    try {
      await proxied.pool.query("SELECT 1"); // the connection is open before counting
      const blob = "x".repeat(200 * 1024);
      const before = proxy.bytesFromTarget;
      const submitted = await submitWorkflow(
        proxied,
        tenantId,
        spec(Array.from({ length: 20 }, (_, i) => ({ key: `t${i}`, payload: { blob }, dependsOn: i === 0 ? [] : ["t0"] }))),
        { horizonMs: HORIZON },
      );
      const read = proxy.bytesFromTarget - before;
      expect(submitted.created).toBe(true);
      expect(submitted.tasks.map((t) => [t.key, t.task.status])).toEqual(Array.from({ length: 20 }, (_, i) => [`t${i}`, i === 0 ? "QUEUED" : "BLOCKED"]));
      const stored = await dbA.pool.query<{ id: string }>("SELECT id FROM tasks WHERE workflow_id = $1 ORDER BY id", [submitted.workflow.id]);
      expect(submitted.tasks.map((t) => t.task.id).sort()).toEqual(stored.rows.map((r) => r.id));
      // Reading them back was their payloads again: 20 x 200 KiB (4 MB); the submission itself a few KB.
      expect(read).toBeLessThan(200 * 1024);
    } finally {
      await proxied.close();
      await proxy.close();
    }
  });
});
