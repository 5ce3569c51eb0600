/**
 * The PUSH worker's CompletionBatcher on a real Postgres: one statement
 * records many tenants' outcomes, so one value the database refuses must not
 * fail the others (they would run again after their leases), and the refused
 * one is recorded without its result rather than left to its lease. One
 * Postgres cannot reach is held and recorded again while its lease lasts.
 */
import { normalizeTaskSpec, parseInput, submitTaskInputSchema } from "@tasklane/core";
import { createDatabase, getTask, listAttempts, startAttemptsByIds, submitTasks, type Completion } from "@tasklane/db";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { CompletionBatcher, OutcomeNotRecorded } from "../../apps/worker/src/completion-batcher.js";
import { seedPushQueue, seedTenant } from "../helpers/seed.js";
import { startTcpProxy } from "../helpers/tcp-proxy.js";
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

  it("holds outcomes while Postgres cannot be reached, until their leases end, and drops past the cap, logging each through the throttled logs", async () => {
    const { started } = await startedTasks(3);
    // Postgres unreachable: no statement can run, for any item, and none is recorded without its result.
    const unreachable = createDatabase({ url: "postgresql://postgres@127.0.0.1:1/none", max: 1, applicationName: "batcher-test" });
    const logged = { unavailable: [] as unknown[], dropped: [] as unknown[] };
    const batcher = new CompletionBatcher(unreachable, "worker:test", async () => undefined, 300_000, 100, 50, {
      maxHeld: 2,
      unavailableLog: { failed: (e) => logged.unavailable.push(e), succeeded: () => undefined },
      droppedLog: { failed: (e) => logged.dropped.push(e), succeeded: () => undefined },
    });
    const t0 = performance.now();
    const outcomes = await Promise.allSettled(started.map((s) => batcher.complete(completion(s, { ok: true }), t0 + 700)));
    const tookMs = performance.now() - t0;
    await unreachable.close();
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected", "rejected"]);
    const reasons = outcomes.map((o) => (o.status === "rejected" ? (o.reason as Error) : undefined));
    for (const r of reasons) expect(r).toBeInstanceOf(OutcomeNotRecorded);
    // The third was over the cap at once; the two held ones were tried again until their leases ended.
    expect(reasons[2]!.message).toMatch(/2 outcomes are already held/);
    expect(reasons[0]!.message).toMatch(/lease ran out/);
    expect(tookMs).toBeGreaterThanOrEqual(700);
    expect(logged.unavailable.length).toBeGreaterThan(1);
    expect(logged.dropped).toHaveLength(3);
    expect(batcher.heldCount).toBe(0);
    for (const s of started) expect((await getTask(tdb.db, s.task.tenantId, s.task.id))?.status).toBe("RUNNING");
  });

  it("records held outcomes once Postgres answers again, the drain waiting for them", async () => {
    const { tenantId, started } = await startedTasks(3);
    const proxy = await startTcpProxy("127.0.0.1", Number(new URL(tdb.url).port || 5432));
    const viaProxy = createDatabase({ url: proxy.rewrite(tdb.url), max: 2, applicationName: "batcher-test" });
    try {
      await proxy.cut();
      const batcher = new CompletionBatcher(viaProxy, "worker:test", async () => undefined, 300_000, 100, 5);
      const far = performance.now() + 60_000;
      const outcomes = Promise.all(started.map((s, i) => batcher.complete(completion(s, { n: i }), far)));
      await vi.waitFor(() => expect(batcher.heldCount).toBe(3), { timeout: 5_000, interval: 10 });
      await proxy.restore();
      await batcher.drain(performance.now() + 10_000);
      expect(await outcomes).toEqual([true, true, true]);
      for (const [i, s] of started.entries()) expect(await getTask(tdb.db, tenantId, s.task.id)).toMatchObject({ status: "SUCCEEDED", result: { n: i } });
    } finally {
      await viaProxy.close();
      await proxy.close();
    }
  });

  it("runs a single statement again while Postgres cannot be reached, until the lease ends; any other error at once", async () => {
    const batcher = new CompletionBatcher(tdb.db, "worker:test", async () => undefined, 300_000);
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
    let calls = 0;
    const recorded = await batcher.whileLeaseLasts("task_x", performance.now() + 10_000, async () => {
      if (++calls < 3) throw refused;
      return "recorded";
    });
    expect([recorded, calls]).toEqual(["recorded", 3]);

    const t0 = performance.now();
    const expired = await batcher.whileLeaseLasts("task_y", t0 + 500, async () => Promise.reject(refused)).catch((e: unknown) => e);
    expect(expired).toBeInstanceOf(OutcomeNotRecorded);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(500);

    calls = 0;
    const bug = await batcher.whileLeaseLasts("task_z", performance.now() + 10_000, async () => {
      calls++;
      throw Object.assign(new Error("deadlock detected"), { code: "40P01" });
    }).catch((e: unknown) => e);
    expect([(bug as Error).message, calls]).toEqual(["deadlock detected", 1]);
    expect(batcher.heldCount).toBe(0);
  });
});
