import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IdPrefix, newId, normalizeTaskSpec, parseInput, submitTaskInputSchema, type SubmitTaskInput } from "@tasklane/core";
import {
  cancelTask,
  completeAttempts,
  completeAttemptsQuietly,
  completeLeases,
  drainDispatchOutbox,
  expireLeases,
  extendLease,
  failAttempt,
  failLease,
  getTask,
  listAttempts,
  listTasksThatBelongInRedis,
  redriveTask,
  returnUndeliveredLeases,
  startAttemptsByIds,
  startAttemptsFromQueue,
  startAttemptsFromQueueIn,
  submitTasks,
  type Database,
  type DispatchIntent,
  type Queryable,
  type TaskRecord,
} from "@tasklane/db";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { seedPushQueue, seedTenant } from "../helpers/seed.js";

const HORIZON = 300_000;
let tdb: TestDatabase;
let db: Database;

const spec = (input: Partial<SubmitTaskInput> & { type: string }) =>
  normalizeTaskSpec(parseInput(submitTaskInputSchema, input), Date.now());

async function submitOne(tenantId: string, input: Partial<SubmitTaskInput> & { type: string }) {
  const { tasks } = await submitTasks(db, tenantId, [spec(input)], { horizonMs: HORIZON });
  return tasks[0]!;
}

async function leaseOne(queueId: string, leaseMs = 30_000) {
  const [lease] = await startAttemptsFromQueue(db, queueId, 1, 60, { workerId: "w1", leaseMs, actor: "test" });
  return lease;
}

const statuses = async (taskId: string) =>
  (await db.pool.query("SELECT from_status, to_status FROM task_events WHERE task_id = $1 ORDER BY id", [taskId])).rows.map(
    (r) => `${r.from_status ?? "-"}>${r.to_status}`,
  );

beforeAll(async () => {
  tdb = await createTestDatabase("transitions");
  db = tdb.db;
});
afterAll(async () => tdb?.drop());

describe("submitTasks", () => {
  it("returns tasks in input order with QUEUED/SCHEDULED from runAt, and records creation events", async () => {
    const { tenantId } = await seedTenant(db);
    const { tasks } = await submitTasks(
      db,
      tenantId,
      [spec({ type: "a" }), spec({ type: "b", delaySeconds: 3600 }), spec({ type: "c" })],
      { horizonMs: HORIZON },
    );
    expect(tasks.map((t) => t.type)).toEqual(["a", "b", "c"]);
    expect(tasks.map((t) => t.status)).toEqual(["QUEUED", "SCHEDULED", "QUEUED"]);
    expect(await statuses(tasks[1]!.id)).toEqual(["->SCHEDULED"]);
  });

  it("is all or nothing: an unknown queue writes nothing", async () => {
    const { tenantId } = await seedTenant(db);
    await expect(submitTasks(db, tenantId, [spec({ type: "a" }), spec({ type: "b", queue: "nope" })], { horizonMs: HORIZON })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    const n = await db.pool.query("SELECT count(*)::int AS n FROM tasks WHERE tenant_id = $1", [tenantId]);
    expect(n.rows[0].n).toBe(0);
  });

  it("gives one task for 50 concurrent submissions of one idempotency key, per tenant", async () => {
    const a = await seedTenant(db);
    const b = await seedTenant(db);
    const results = await Promise.all(Array.from({ length: 50 }, () => submitOne(a.tenantId, { type: "x", idempotencyKey: "k1" })));
    expect(new Set(results.map((t) => t.id)).size).toBe(1);
    const other = await submitOne(b.tenantId, { type: "x", idempotencyKey: "k1" });
    expect(other.id).not.toBe(results[0]!.id);
    const n = await db.pool.query("SELECT count(*)::int AS n FROM tasks WHERE idempotency_key = 'k1'");
    expect(n.rows[0].n).toBe(2);
  });

  it("lets concurrent batches naming the same idempotency keys in different orders all land, one task per key", async () => {
    const { tenantId } = await seedTenant(db);
    // Each batch inserts under its keys' locks one by one: in the caller's order, two batches with
    // opposite orders each held a key the other waited for (a deadlock, one batch refused whole;
    // seen in about one round in three).
    for (let round = 0; round < 4; round++) {
      const keys = Array.from({ length: 200 }, (_, i) => `shared-${round}-${String(i).padStart(3, "0")}`);
      const orders = Array.from({ length: 8 }, (_, b) => (b % 2 === 0 ? keys : [...keys].reverse()));
      // Every pooled connection open first, so the batches' statements do overlap.
      await Promise.all(Array.from({ length: 5 }, () => db.pool.query("SELECT pg_sleep(0.05)")));
      const batches = await Promise.all(
        orders.map((order, b) =>
          submitTasks(db, tenantId, [spec({ type: `unkeyed-${b}` }), ...order.map((k) => spec({ type: "x", idempotencyKey: k }))], { horizonMs: HORIZON }),
        ),
      );
      for (const [b, { tasks }] of batches.entries()) {
        expect(tasks.map((t) => t.idempotencyKey)).toEqual([null, ...orders[b]!]);
        expect(tasks[0]!.type).toBe(`unkeyed-${b}`);
      }
      const idOf = (b: number, key: string) => batches[b]!.tasks.find((t) => t.idempotencyKey === key)?.id;
      for (const key of keys) expect(new Set(batches.map((_, b) => idOf(b, key))).size).toBe(1);
    }
    const n = await db.pool.query("SELECT count(*)::int AS n FROM tasks WHERE tenant_id = $1", [tenantId]);
    expect(n.rows[0].n).toBe(4 * (200 + 8));
  });
});

describe("leases and fencing", () => {
  it("leases HIGH before NORMAL before LOW", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    await submitTasks(db, tenantId, [spec({ type: "low", priority: "LOW" }), spec({ type: "normal" }), spec({ type: "high", priority: "HIGH" })], {
      horizonMs: HORIZON,
    });
    const leases = await startAttemptsFromQueue(db, defaultQueueId, 3, 60, { workerId: "w", leaseMs: 30_000, actor: "t" });
    expect(leases.map((l) => l.task.type)).toEqual(["high", "normal", "low"]);
  });

  it("ages waiting tasks up the lanes: LOW waiting two periods competes with HIGH, oldest first", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const old = await submitOne(tenantId, { type: "old-low", priority: "LOW" });
    // Submitted 5 s ago and due since: it has waited two and a half 2 s periods.
    await db.pool.query("UPDATE tasks SET created_at = created_at - interval '5 s', run_at = run_at - interval '5 s' WHERE id = $1", [old.id]);
    await submitTasks(db, tenantId, [spec({ type: "new-high", priority: "HIGH" })], { horizonMs: HORIZON });
    const aged = await startAttemptsFromQueue(db, defaultQueueId, 1, 2, { workerId: "w", leaseMs: 30_000, actor: "t" });
    expect(aged.map((l) => l.task.type)).toEqual(["old-low"]);
  });

  it("ages a task from its submission when its runAt is earlier: a backdated LOW task has waited for nothing", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    await submitTasks(db, tenantId, [spec({ type: "high", priority: "HIGH" })], { horizonMs: HORIZON });
    // The API submits a past runAt as now (normalizeTaskSpec); a cron run or a stored row may still be earlier.
    const backdated = { ...spec({ type: "backdated-low", priority: "LOW" }), runAt: new Date(Date.now() - 3_600_000) };
    await submitTasks(db, tenantId, [backdated], { horizonMs: HORIZON });
    const leases = await startAttemptsFromQueue(db, defaultQueueId, 1, 2, { workerId: "w", leaseMs: 30_000, actor: "t" });
    expect(leases.map((l) => l.task.type)).toEqual(["high"]);
  });

  it("without aging, HIGH goes first", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    await submitTasks(db, tenantId, [{ ...spec({ type: "old-low", priority: "LOW" }), runAt: new Date(Date.now() - 5_000) }], { horizonMs: HORIZON });
    await submitTasks(db, tenantId, [spec({ type: "new-high", priority: "HIGH" })], { horizonMs: HORIZON });
    const leases = await startAttemptsFromQueue(db, defaultQueueId, 1, 60, { workerId: "w", leaseMs: 30_000, actor: "t" });
    expect(leases.map((l) => l.task.type)).toEqual(["new-high"]);
  });

  it("gives every lease of a batch its own well-formed token, on both start paths", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const specs = Array.from({ length: 6 }, (_, i) => spec({ type: `t${i}` }));
    const { tasks } = await submitTasks(db, tenantId, specs, { horizonMs: HORIZON });
    const pulled = await startAttemptsFromQueue(db, defaultQueueId, 3, 60, { workerId: "w", leaseMs: 30_000, actor: "t" });
    const rest = tasks.map((t) => t.id).filter((id) => !pulled.some((l) => l.task.id === id));
    const pushed = await startAttemptsByIds(db, rest, { workerId: "w", leaseMs: 30_000, actor: "t" });
    const tokens = [...pulled, ...pushed].map((l) => l.leaseToken);
    expect(tokens).toHaveLength(6);
    for (const token of tokens) expect(token).toMatch(/^lt_1_[A-Za-z0-9_-]{22}$/);
    expect(new Set(tokens.map((t) => t.slice(5))).size).toBe(6);
  });

  it("refuses an outcome under a stale generation and accepts the current one", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const task = await submitOne(tenantId, { type: "t" });
    const lease = (await leaseOne(defaultQueueId))!;
    expect(lease.task.id).toBe(task.id);
    expect(lease.leaseToken).toMatch(/^lt_1_/);
    const stale = await completeAttempts(db, [{ taskId: task.id, leaseGeneration: 0, result: 1 }], "test");
    expect(stale.refused).toEqual([task.id]);
    const ok = await completeAttempts(db, [{ taskId: task.id, leaseGeneration: 1, result: { n: 1 } }], "test");
    expect(ok.accepted[0]).toMatchObject({ status: "SUCCEEDED", result: { n: 1 } });
    const again = await completeAttempts(db, [{ taskId: task.id, leaseGeneration: 1, result: 2 }], "test");
    expect(again.refused).toEqual([task.id]);
    const attempts = (await listAttempts(db, [task.id])).get(task.id)!;
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ number: 1, outcome: "SUCCEEDED", workerId: "w1" });
    expect(await statuses(task.id)).toEqual(["->QUEUED", "QUEUED>RUNNING", "RUNNING>SUCCEEDED"]);
  });

  it("answers a PUSH start with the worker's columns of the task, as stored", async () => {
    const { tenantId } = await seedTenant(db);
    await seedPushQueue(db, tenantId, "lean", "http://127.0.0.1:9/never");
    const traceParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const input = {
      type: "lean",
      queue: "lean",
      payload: { n: 1, tags: ["a"] },
      maxAttempts: 4,
      timeoutSeconds: 17,
      backoff: { strategy: "LINEAR" as const, delaySeconds: 2.5, maxDelaySeconds: 30, jitter: false },
    };
    const { tasks } = await submitTasks(db, tenantId, [{ ...spec(input), traceParent }], { horizonMs: HORIZON });
    const [started] = await startAttemptsByIds(db, [tasks[0]!.id], { workerId: "w1", leaseMs: 30_000, actor: "test" });
    const stored = (await getTask(db, tenantId, tasks[0]!.id))!;
    const columns = [
      "id", "tenantId", "queueId", "type", "payload", "runAt", "startedAt", "attempts", "maxAttempts", "backoffStrategy",
      "backoffDelaySeconds", "backoffMaxDelaySeconds", "backoffJitter", "timeoutSeconds", "workflowId", "leaseGeneration",
      "leaseToken", "leaseExpiresAt", "traceParent",
    ] as const;
    expect(Object.keys(started!.task).sort()).toEqual([...columns].sort());
    expect(started!.task).toEqual(Object.fromEntries(columns.map((c) => [c, stored[c]])));
    expect(started!.task).toMatchObject({ payload: { n: 1, tags: ["a"] }, backoffStrategy: "LINEAR", backoffDelaySeconds: 2.5, timeoutSeconds: 17, traceParent });
    expect(started!.leaseToken).toBe(stored.leaseToken);
  });

  it("answers a PULL lease with the API's view of the task and its lease, as stored, its queue named", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const traceParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const input = {
      type: "leased",
      payload: { n: 2 },
      priority: "HIGH" as const,
      maxAttempts: 5,
      idempotencyKey: "lease-shape",
      orderingKey: "shape",
    };
    const { tasks } = await submitTasks(db, tenantId, [{ ...spec(input), traceParent }], { horizonMs: HORIZON });
    const [leased] = await startAttemptsFromQueue(db, defaultQueueId, 1, 60, { workerId: "w1", leaseMs: 30_000, actor: "test" });
    const stored = (await getTask(db, tenantId, tasks[0]!.id))!;
    const columns = [
      "id", "type", "queueName", "payload", "status", "priority", "runAt", "createdAt", "startedAt", "completedAt",
      "attempts", "maxAttempts", "timeoutSeconds", "result", "lastError", "idempotencyKey", "orderingKey", "workflowId", "scheduleId",
      "cancelRequested", "traceParent", "leaseGeneration", "leaseToken", "leaseExpiresAt",
    ] as const;
    expect(Object.keys(leased!.task).sort()).toEqual([...columns].sort());
    expect(leased!.task).toEqual(Object.fromEntries(columns.map((c) => [c, stored[c]])));
    expect(leased!.task).toMatchObject({ queueName: "default", status: "RUNNING", priority: "HIGH", payload: { n: 2 }, idempotencyKey: "lease-shape", orderingKey: "shape", traceParent });
    expect(leased!.leaseToken).toBe(stored.leaseToken);
  });

  it("records outcomes quietly (the PUSH worker's call) as completeAttempts does, refusing stale ones and releasing an ordering key", async () => {
    const { tenantId } = await seedTenant(db);
    const queueId = await seedPushQueue(db, tenantId, "quiet", "http://127.0.0.1:9/never");
    const plain = await submitOne(tenantId, { type: "plain", queue: "quiet" });
    const keyed = await submitOne(tenantId, { type: "keyed", queue: "quiet", orderingKey: "k" });
    const next = await submitOne(tenantId, { type: "next", queue: "quiet", orderingKey: "k" });
    const started = await startAttemptsByIds(db, [plain.id, keyed.id], { workerId: "w1", leaseMs: 30_000, actor: "test" });
    expect(started.map((a) => a.task.id).sort()).toEqual([plain.id, keyed.id].sort());
    const gen = (id: string) => started.find((a) => a.task.id === id)!.task.leaseGeneration;

    const done = await completeAttemptsQuietly(
      db,
      [
        { taskId: plain.id, leaseGeneration: gen(plain.id), result: { n: 1 } },
        { taskId: keyed.id, leaseGeneration: gen(keyed.id), result: "k" },
        { taskId: next.id, leaseGeneration: 0, result: null },
      ],
      "w1",
    );
    expect(done.refused).toEqual([next.id]);
    expect(done.dispatch.map((d) => d.taskId)).toEqual([next.id]);
    expect(await getTask(db, tenantId, plain.id)).toMatchObject({ status: "SUCCEEDED", result: { n: 1 } });
    expect(await getTask(db, tenantId, keyed.id)).toMatchObject({ status: "SUCCEEDED", result: "k" });
    expect((await listAttempts(db, [plain.id])).get(plain.id)![0]).toMatchObject({ number: 1, outcome: "SUCCEEDED" });
    expect(await statuses(plain.id)).toEqual(["->QUEUED", "QUEUED>RUNNING", "RUNNING>SUCCEEDED"]);
    expect((await completeAttemptsQuietly(db, [{ taskId: plain.id, leaseGeneration: gen(plain.id), result: 2 }], "w1")).refused).toEqual([plain.id]);
  });

  it("expires a lease: the attempt counts, the old token is void, the next lease has a higher generation", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const task = await submitOne(tenantId, { type: "t", maxAttempts: 3 });
    const first = (await leaseOne(defaultQueueId, 1))!;
    await new Promise((r) => setTimeout(r, 20));
    const { expired } = await expireLeases(db, 100, HORIZON);
    expect(expired).toBeGreaterThanOrEqual(1);
    expect((await getTask(db, tenantId, task.id))!.status).toBe("QUEUED");
    expect(await extendLease(db, tenantId, task.id, first.task.leaseGeneration, 30_000)).toBeNull();
    const second = (await leaseOne(defaultQueueId))!;
    expect(second.task.leaseGeneration).toBe(first.task.leaseGeneration + 1);
    expect(second.task.attempts).toBe(2);
    const late = await completeAttempts(db, [{ taskId: task.id, leaseGeneration: first.task.leaseGeneration, result: "late" }], "old");
    expect(late.refused).toEqual([task.id]);
    const outcomes = (await listAttempts(db, [task.id])).get(task.id)!.map((a) => a.outcome);
    expect(outcomes).toEqual(["LEASE_EXPIRED", null]);
  });

  it("moves a failed attempt to RETRYING after the backoff, then to DEAD when the budget is spent", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const task = await submitOne(tenantId, { type: "t", maxAttempts: 2 });
    const l1 = (await leaseOne(defaultQueueId))!;
    const r1 = await failAttempt(
      db,
      { taskId: task.id, leaseGeneration: l1.task.leaseGeneration, error: "boom", outcome: "FAILED", decision: { kind: "retry", delayMs: 0 } },
      "w1",
      HORIZON,
    );
    expect(r1.accepted[0]).toMatchObject({ status: "RETRYING", lastError: "boom" });
    const l2 = (await leaseOne(defaultQueueId))!;
    expect(l2.task.attempts).toBe(2);
    const r2 = await failAttempt(
      db,
      { taskId: task.id, leaseGeneration: l2.task.leaseGeneration, error: "boom2", outcome: "TIMED_OUT", decision: { kind: "dead", reason: "exhausted" } },
      "w1",
      HORIZON,
    );
    expect(r2.accepted[0]).toMatchObject({ status: "DEAD", lastError: "boom2" });
    const redriven = await redriveTask(db, tenantId, task.id, "test", HORIZON);
    expect(redriven.task).toMatchObject({ status: "QUEUED", attempts: 0 });
    await expect(redriveTask(db, tenantId, task.id, "test", HORIZON)).rejects.toMatchObject({ code: "CONFLICT" });
  });

  it("keeps a retry in the future out of reach until its runAt", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const task = await submitOne(tenantId, { type: "t", maxAttempts: 2 });
    const l1 = (await leaseOne(defaultQueueId))!;
    await failAttempt(
      db,
      { taskId: task.id, leaseGeneration: l1.task.leaseGeneration, error: "e", outcome: "FAILED", decision: { kind: "retry", delayMs: 60_000 } },
      "w1",
      HORIZON,
    );
    expect(await leaseOne(defaultQueueId)).toBeUndefined();
  });

  it("starts a PUSH task ahead of its runAt only within startAheadMs, counting the attempt and its lease from runAt", async () => {
    const { tenantId } = await seedTenant(db);
    await seedPushQueue(db, tenantId, "ahead", "https://example.com/hook");
    const [soon, later, due] = (
      await submitTasks(
        db,
        tenantId,
        [spec({ type: "soon", queue: "ahead", delaySeconds: 2 }), spec({ type: "later", queue: "ahead", delaySeconds: 60 }), spec({ type: "due", queue: "ahead" })],
        { horizonMs: HORIZON },
      )
    ).tasks as [TaskRecord, TaskRecord, TaskRecord];
    const options = { workerId: "w1", leaseMs: { timeoutPlusMs: 15_000 }, actor: "test" };
    // Without a look-ahead only the due task starts.
    expect((await startAttemptsByIds(db, [soon.id, later.id], options)).map((a) => a.task.id)).toEqual([]);

    const started = await startAttemptsByIds(db, [soon.id, later.id, due.id], { ...options, startAheadMs: 10_000 });
    expect(started.map((a) => a.task.type).sort()).toEqual(["due", "soon"]);
    const held = started.find((a) => a.task.id === soon.id)!;
    const now = started.find((a) => a.task.id === due.id)!;
    // Held until runAt by the database's clock, never longer than the time left.
    expect(held.startInMs).toBeGreaterThan(0);
    expect(held.startInMs).toBeLessThanOrEqual(2_000);
    expect(now.startInMs).toBe(0);
    expect(held.task.startedAt).toEqual(soon.runAt);
    expect(held.leaseExpiresAt.getTime()).toBe(soon.runAt.getTime() + (soon.timeoutSeconds + 15) * 1000);
    const [attempt] = (await listAttempts(db, [soon.id])).get(soon.id)!;
    expect(attempt!.startedAt).toEqual(soon.runAt);
    expect((await getTask(db, tenantId, later.id))!.status).toBe("SCHEDULED");
  });
});

describe("cancel", () => {
  it("cancels a QUEUED task for good and answers CONFLICT for a terminal one", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const task = await submitOne(tenantId, { type: "t" });
    const { task: cancelled, wasRunning } = await cancelTask(db, tenantId, task.id, "api");
    expect(cancelled.status).toBe("CANCELLED");
    expect(wasRunning).toBe(false);
    expect(await leaseOne(defaultQueueId)).toBeUndefined();
    await expect(cancelTask(db, tenantId, task.id, "api")).rejects.toMatchObject({ code: "CONFLICT" });
  });

  it("cancels a RUNNING task: heartbeat reports it, the late outcome is refused", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const task = await submitOne(tenantId, { type: "t" });
    const lease = (await leaseOne(defaultQueueId))!;
    const { task: cancelled, wasRunning } = await cancelTask(db, tenantId, task.id, "api");
    expect(wasRunning).toBe(true);
    expect(cancelled).toMatchObject({ status: "CANCELLED", cancelRequested: true });
    const hb = await extendLease(db, tenantId, task.id, lease.task.leaseGeneration, 30_000);
    expect(hb?.cancelRequested).toBe(true);
    const late = await completeAttempts(db, [{ taskId: task.id, leaseGeneration: lease.task.leaseGeneration, result: 1 }], "w");
    expect(late.refused).toEqual([task.id]);
    expect((await getTask(db, tenantId, task.id))!.status).toBe("CANCELLED");
  });

  it("keeps a PULL lease within its task's timeout: granted and extended up to it, never shortened, refused once it is spent", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const attemptStart = async (taskId: string) =>
      ((await db.pool.query(`SELECT started_at FROM task_attempts WHERE task_id = $1`, [taskId])).rows[0].started_at as Date).getTime();

    const long = await submitOne(tenantId, { type: "long", timeoutSeconds: 60 });
    const asked = (await leaseOne(defaultQueueId, 3_600_000))!;
    expect(asked.task.id).toBe(long.id);
    expect(asked.leaseExpiresAt.getTime()).toBe((await attemptStart(long.id)) + 60_000);
    // Asking for less than the lease has left leaves it as it is.
    const short = await extendLease(db, tenantId, long.id, asked.task.leaseGeneration, 1_000);
    expect(short?.leaseExpiresAt.getTime()).toBe(asked.leaseExpiresAt.getTime());

    const brief = await submitOne(tenantId, { type: "brief", timeoutSeconds: 60 });
    const granted = (await leaseOne(defaultQueueId, 5_000))!;
    expect(granted.task.id).toBe(brief.id);
    expect(granted.leaseExpiresAt.getTime()).toBe((await attemptStart(brief.id)) + 5_000);
    const extended = await extendLease(db, tenantId, brief.id, granted.task.leaseGeneration, 3_600_000);
    expect(extended?.leaseExpiresAt.getTime()).toBe((await attemptStart(brief.id)) + 60_000);

    // The attempt started 61 s ago: its budget is spent, and the lease cannot be held any longer.
    await db.pool.query(`UPDATE task_attempts SET started_at = started_at - interval '61 seconds' WHERE task_id = $1`, [long.id]);
    expect(await extendLease(db, tenantId, long.id, asked.task.leaseGeneration, 30_000)).toBeNull();
    expect((await getTask(db, tenantId, long.id))!.leaseExpiresAt?.getTime()).toBe(asked.leaseExpiresAt.getTime());
  });

  it("hands back a lease never delivered: waiting again, its attempt uncounted and unrecorded, its token dead; a lease moved on is left", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const task = await submitOne(tenantId, { type: "t" });
    const lease = (await leaseOne(defaultQueueId))!;
    const other = await seedTenant(db);
    expect(await returnUndeliveredLeases(db, other.tenantId, [{ taskId: task.id, leaseGeneration: lease.task.leaseGeneration }], "w")).toEqual([]);
    expect(await returnUndeliveredLeases(db, tenantId, [{ taskId: task.id, leaseGeneration: lease.task.leaseGeneration }], "worker:w1")).toEqual([task.id]);
    expect(await getTask(db, tenantId, task.id)).toMatchObject({ status: "QUEUED", attempts: 0, startedAt: null, leaseToken: null, leaseExpiresAt: null });
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM task_attempts WHERE task_id = $1`, [task.id])).rows[0].n).toBe(0);
    const last = (await db.pool.query(`SELECT from_status, to_status, actor, reason FROM task_events WHERE task_id = $1 ORDER BY id DESC LIMIT 1`, [task.id])).rows[0];
    expect(last).toMatchObject({ from_status: "RUNNING", to_status: "QUEUED", actor: "worker:w1" });
    // The next lease runs it as its first attempt; the returned token is refused.
    const again = (await leaseOne(defaultQueueId))!;
    expect(again.task).toMatchObject({ id: task.id, attempts: 1 });
    expect(again.task.leaseGeneration).toBeGreaterThan(lease.task.leaseGeneration);
    expect(await returnUndeliveredLeases(db, tenantId, [{ taskId: task.id, leaseGeneration: lease.task.leaseGeneration }], "w")).toEqual([]);
    const late = await completeAttempts(db, [{ taskId: task.id, leaseGeneration: lease.task.leaseGeneration, result: 1 }], "w");
    expect(late.refused).toEqual([task.id]);
  });

  it("treats another tenant's task exactly like a missing one", async () => {
    const a = await seedTenant(db);
    const b = await seedTenant(db);
    const task = await submitOne(a.tenantId, { type: "t" });
    expect(await getTask(db, b.tenantId, task.id)).toBeNull();
    const missing = await cancelTask(db, b.tenantId, "task_00000000000000000000000000000000", "api").catch((e: unknown) => e);
    const foreign = await cancelTask(db, b.tenantId, task.id, "api").catch((e: unknown) => e);
    expect(foreign).toMatchObject({ code: "NOT_FOUND" });
    expect((foreign as Error).message.replace(task.id, "ID")).toBe((missing as Error).message.replace("task_00000000000000000000000000000000", "ID"));
    expect((await getTask(db, a.tenantId, task.id))!.status).toBe("QUEUED");
  });
});

describe("ordering keys", () => {
  it("starts the next task of a key only after the previous one finished", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const first = await submitOne(tenantId, { type: "1", orderingKey: "acct-1" });
    const second = await submitOne(tenantId, { type: "2", orderingKey: "acct-1" });
    const other = await submitOne(tenantId, { type: "3", orderingKey: "acct-2" });
    const leases = await startAttemptsFromQueue(db, defaultQueueId, 10, 60, { workerId: "w", leaseMs: 30_000, actor: "t" });
    expect(leases.map((l) => l.task.id).sort()).toEqual([first.id, other.id].sort());
    const l1 = leases.find((l) => l.task.id === first.id)!;
    await completeAttempts(db, [{ taskId: first.id, leaseGeneration: l1.task.leaseGeneration, result: null }], "w");
    const next = await startAttemptsFromQueue(db, defaultQueueId, 10, 60, { workerId: "w", leaseMs: 30_000, actor: "t" });
    expect(next.map((l) => l.task.id)).toEqual([second.id]);
  });

  it("starts a task redriven while a later task of its key runs only once that one has finished, and before the rest", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const lease = () => startAttemptsFromQueue(db, defaultQueueId, 10, 60, { workerId: "w", leaseMs: 30_000, actor: "t" });
    const [first, second, third] = [
      await submitOne(tenantId, { type: "1", orderingKey: "acct-9", maxAttempts: 1 }),
      await submitOne(tenantId, { type: "2", orderingKey: "acct-9" }),
      await submitOne(tenantId, { type: "3", orderingKey: "acct-9" }),
    ];
    const [l1] = await lease();
    expect(l1!.task.id).toBe(first!.id);
    await failAttempt(db, { taskId: first!.id, leaseGeneration: l1!.task.leaseGeneration, error: "x", outcome: "FAILED", decision: { kind: "dead", reason: "no" } }, "w", HORIZON);
    const [l2] = await lease();
    expect(l2!.task.id).toBe(second!.id);

    await redriveTask(db, tenantId, first!.id, "test", HORIZON);
    // The second still runs: neither the redriven first nor the third may start beside it.
    expect(await lease()).toEqual([]);
    await completeAttempts(db, [{ taskId: second!.id, leaseGeneration: l2!.task.leaseGeneration, result: null }], "w");
    expect((await lease()).map((l) => l.task.id)).toEqual([first!.id]);
    void third;
  });

  it("re-dispatches a PUSH task redriven while a later task of its key ran when that one finishes, not the task after it", async () => {
    const { tenantId } = await seedTenant(db);
    const queueId = await seedPushQueue(db, tenantId, "push-redrive", "http://127.0.0.1:9/never");
    const start = () => startAttemptsFromQueue(db, queueId, 10, 60, { workerId: "w", leaseMs: 30_000, actor: "t" });
    const first = await submitOne(tenantId, { type: "1", queue: "push-redrive", orderingKey: "acct-7", maxAttempts: 1 });
    const second = await submitOne(tenantId, { type: "2", queue: "push-redrive", orderingKey: "acct-7" });
    const third = await submitOne(tenantId, { type: "3", queue: "push-redrive", orderingKey: "acct-7" });
    const [l1] = await start();
    await failAttempt(db, { taskId: first.id, leaseGeneration: l1!.task.leaseGeneration, error: "x", outcome: "FAILED", decision: { kind: "dead", reason: "no" } }, "w", HORIZON);
    const [l2] = await start();
    expect(l2!.task.id).toBe(second.id);
    await redriveTask(db, tenantId, first.id, "test", HORIZON);
    // The worker finds the redriven first blocked by the running second and drops its job.
    expect(await start()).toEqual([]);
    const done = await completeAttempts(db, [{ taskId: second.id, leaseGeneration: l2!.task.leaseGeneration, result: null }], "w");
    // Its job must come back now: the third waits for it, so dispatching the third instead left the key idle until the reconciler's sweep.
    expect(done.dispatch.map((d) => d.taskId)).toEqual([first.id]);
    expect((await start()).map((l) => l.task.id)).toEqual([first.id]);
    void third;
  });

  it("checks a waiting task against its key's unfinished tasks, not the key's whole finished history", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    // A key with a long history (kept for the retention period), then 21 waiting tasks of it: the first can start.
    const history = Array.from({ length: 3_000 }, () => newId(IdPrefix.task));
    await db.pool.query(
      `INSERT INTO tasks (id, tenant_id, queue_id, type, status, run_at, created_at, completed_at, attempts, max_attempts,
                          backoff_strategy, backoff_delay_seconds, backoff_jitter, timeout_seconds, ordering_key)
       SELECT id, $2, $3, 'done', 'SUCCEEDED', now() - interval '2 hours', now() - interval '2 hours', now() - interval '2 hours',
              1, 3, 'EXPONENTIAL', 1, true, 60, 'long-history'
         FROM unnest($1::text[]) AS u(id)`,
      [history, tenantId, defaultQueueId],
    );
    const { tasks: waiting } = await submitTasks(db, tenantId, Array.from({ length: 21 }, (_, i) => spec({ type: `w${i}`, orderingKey: "long-history" })), { horizonMs: HORIZON });
    // The lease statement's plan as it ran (rolled back): rows its ordering-key checks read from tasks.
    const client = await db.pool.connect();
    let examined = 0;
    try {
      await client.query("BEGIN");
      const explaining = {
        query: async (config: { text: string; values?: unknown[] }) => {
          const res = await client.query({ text: `EXPLAIN (ANALYZE, FORMAT JSON) ${config.text}`, values: config.values ?? [] });
          type PlanNode = { "Relation Name"?: string; Alias?: string; "Actual Rows": number; "Actual Loops": number; "Rows Removed by Filter"?: number; Plans?: PlanNode[] };
          const walk = (node: PlanNode): number =>
            (node["Relation Name"] === "tasks" && /^o(_\d+)?$/.test(node.Alias ?? "") ? (node["Actual Rows"] + (node["Rows Removed by Filter"] ?? 0)) * node["Actual Loops"] : 0) +
            (node.Plans ?? []).reduce((sum, child) => sum + walk(child), 0);
          examined = walk((res.rows[0] as { "QUERY PLAN": Array<{ Plan: PlanNode }> })["QUERY PLAN"][0]!.Plan);
          return { rows: [] };
        },
      };
      await startAttemptsFromQueueIn(explaining as unknown as Queryable, defaultQueueId, 10, 60, { workerId: "w", leaseMs: 30_000, actor: "t" });
    } finally {
      await client.query("ROLLBACK");
      client.release();
    }
    // Reading the 3,000 finished tasks once per waiting task of the key was 21 x 3,000 (a lease of 50 behind 200
    // waiting tasks of a key with 50,000 finished took 6.5-9 s), and the one task that can start read them once
    // more, on every start of the key's tasks, looking for one cancelled while it ran. Now neither look reads the
    // key's finished history: the key's 21 waiting tasks, and nothing cancelled while running.
    expect(examined).toBeLessThan(100);
    expect((await startAttemptsFromQueue(db, defaultQueueId, 10, 60, { workerId: "w", leaseMs: 30_000, actor: "t" })).map((l) => l.task.id)).toEqual([waiting[0]!.id]);
  });

  it("holds the key of a PULL task cancelled while it ran until its worker reports or its lease runs out", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const lease = (leaseMs = 30_000) => startAttemptsFromQueue(db, defaultQueueId, 10, 60, { workerId: "w", leaseMs, actor: "t" });
    const keyed = async (key: string) => [await submitOne(tenantId, { type: "1", orderingKey: key }), await submitOne(tenantId, { type: "2", orderingKey: key })];

    // The worker reports a completion: refused (the task is CANCELLED), and the key is free at once.
    const [first, second] = await keyed("reports");
    const [l1] = await lease();
    expect(l1!.task.id).toBe(first!.id);
    await cancelTask(db, tenantId, first!.id, "test", HORIZON);
    // Cancellation is cooperative: the handler may still be running.
    expect(await lease()).toEqual([]);
    const reported = await completeLeases(db, tenantId, [{ taskId: first!.id, token: l1!.leaseToken, result: null }], HORIZON);
    expect(reported.outcomes).toEqual([{ taskId: first!.id, refused: "CONFLICT" }]);
    expect(reported.releasedQueueIds).toEqual([defaultQueueId]);
    expect((await lease()).map((l) => l.task.id)).toEqual([second!.id]);

    // The worker reports a failure: refused likewise, the key free likewise.
    const [third, fourth] = await keyed("fails");
    const [l3] = await lease();
    await cancelTask(db, tenantId, third!.id, "test", HORIZON);
    expect(await lease()).toEqual([]);
    await expect(failLease(db, tenantId, third!.id, l3!.leaseToken, "stopped", true, HORIZON)).rejects.toMatchObject({ code: "CONFLICT" });
    expect((await lease()).map((l) => l.task.id)).toEqual([fourth!.id]);

    // The worker never reports: the key is free once the lease runs out.
    const [fifth, sixth] = await keyed("silent");
    const [l5] = await lease(300);
    expect(l5!.task.id).toBe(fifth!.id);
    await cancelTask(db, tenantId, fifth!.id, "test", HORIZON);
    expect(await lease()).toEqual([]);
    await new Promise((r) => setTimeout(r, 500));
    expect((await lease()).map((l) => l.task.id)).toEqual([sixth!.id]);
  });

  it("frees the key of a PUSH task cancelled while it ran at once: its request is aborted", async () => {
    const { tenantId } = await seedTenant(db);
    const queueId = await seedPushQueue(db, tenantId, "push-cancel", "http://127.0.0.1:9/never");
    const first = await submitOne(tenantId, { type: "1", queue: "push-cancel", orderingKey: "k" });
    const second = await submitOne(tenantId, { type: "2", queue: "push-cancel", orderingKey: "k" });
    const start = () => startAttemptsFromQueue(db, queueId, 10, 60, { workerId: "w", leaseMs: 30_000, actor: "t" });
    expect((await start()).map((l) => l.task.id)).toEqual([first.id]);
    await cancelTask(db, tenantId, first.id, "test", HORIZON);
    expect((await start()).map((l) => l.task.id)).toEqual([second.id]);
  });

  it("re-dispatches the next PUSH task of a key in the statement that finishes its predecessor", async () => {
    const { tenantId } = await seedTenant(db);
    const queueId = await seedPushQueue(db, tenantId, "push", "http://127.0.0.1:9/never");
    const first = await submitOne(tenantId, { type: "1", queue: "push", orderingKey: "k" });
    const second = await submitOne(tenantId, { type: "2", queue: "push", orderingKey: "k" });
    const [lease] = await startAttemptsFromQueue(db, queueId, 10, 60, { workerId: "w", leaseMs: 30_000, actor: "t" });
    expect(lease!.task.id).toBe(first.id);
    const done = await completeAttempts(db, [{ taskId: first.id, leaseGeneration: lease!.task.leaseGeneration, result: null }], "w");
    expect(done.dispatch).toHaveLength(1);
    expect(done.dispatch[0]).toMatchObject({ taskId: second.id, dispatchGeneration: 2 });
    expect(done.dispatch[0]!.outboxId).toBeDefined();
  });
});

describe("dispatch outbox", () => {
  /** Rows earlier tests left behind, drained first so that each test's drain sees only its own. */
  const drainLeftovers = async () => {
    while ((await drainDispatchOutbox(db, 50, 0, async () => undefined)).rows > 0);
  };

  it("writes one row per statement listing its PUSH tasks, and the safety net enqueues exactly those still waiting", async () => {
    await drainLeftovers();
    const { tenantId } = await seedTenant(db);
    await seedPushQueue(db, tenantId, "batch", "http://127.0.0.1:9/never");
    const { tasks, dispatch } = await submitTasks(
      db,
      tenantId,
      [...Array.from({ length: 5 }, (_, i) => spec({ type: `t${i}`, queue: "batch" })), spec({ type: "later", queue: "batch", delaySeconds: 3600 })],
      { horizonMs: 60_000 },
    );
    // The five due tasks share one row; the one beyond the horizon waits for the promoter instead.
    expect(new Set(dispatch.map((i) => i.outboxId)).size).toBe(1);
    expect(dispatch.map((i) => i.taskId).sort()).toEqual(tasks.slice(0, 5).map((t) => t.id).sort());
    const rows = await db.pool.query("SELECT task_id, task_ids FROM outbox WHERE id = $1", [dispatch[0]!.outboxId]);
    expect(rows.rows[0].task_id).toBeNull();
    expect([...rows.rows[0].task_ids].sort()).toEqual(tasks.slice(0, 5).map((t) => t.id).sort());

    // The fast path never ran (a crash after commit): the drain hands over what is still waiting.
    await cancelTask(db, tenantId, tasks[0]!.id, "test");
    const enqueued: DispatchIntent[] = [];
    const drained = await drainDispatchOutbox(db, 50, 0, async (intents) => {
      enqueued.push(...intents);
    });
    expect(drained).toEqual({ rows: 1, tasks: 4 });
    expect(enqueued.map((i) => i.taskId).sort()).toEqual(tasks.slice(1, 5).map((t) => t.id).sort());
    expect((await db.pool.query("SELECT count(*)::int AS n FROM outbox WHERE kind = 'DISPATCH_TASK' AND tenant_id = $1", [tenantId])).rows[0].n).toBe(0);
  });

  it("still drains a row written before rows listed their tasks (one task in task_id)", async () => {
    await drainLeftovers();
    const { tenantId } = await seedTenant(db);
    await seedPushQueue(db, tenantId, "legacy", "http://127.0.0.1:9/never");
    const { tasks } = await submitTasks(db, tenantId, [spec({ type: "old", queue: "legacy" })], { horizonMs: 60_000 });
    await db.pool.query("DELETE FROM outbox WHERE tenant_id = $1", [tenantId]);
    // available_at is stored to the millisecond, rounded: written at now() it can lie up to
    // half a millisecond ahead of a drain that follows at once, which would not see it yet.
    await db.pool.query("INSERT INTO outbox (kind, tenant_id, task_id, available_at) VALUES ('DISPATCH_TASK', $1, $2, now() - interval '1 second')", [
      tenantId,
      tasks[0]!.id,
    ]);
    const enqueued: DispatchIntent[] = [];
    expect(await drainDispatchOutbox(db, 50, 0, async (intents) => void enqueued.push(...intents))).toEqual({ rows: 1, tasks: 1 });
    expect(enqueued.map((i) => i.taskId)).toEqual([tasks[0]!.id]);
  });
});

describe("deleting tasks", () => {
  // Attempts and events carry no foreign key to their task (a key check on
  // each of the four rows a task writes was a tenth of the hot path); a
  // statement-level trigger deletes them with the task instead.
  const children = async (taskIds: string[]) => {
    const res = await db.pool.query<{ events: number; attempts: number }>(
      `SELECT (SELECT count(*) FROM task_events WHERE task_id = ANY($1::text[]))::int AS events,
              (SELECT count(*) FROM task_attempts WHERE task_id = ANY($1::text[]))::int AS attempts`,
      [taskIds],
    );
    return res.rows[0];
  };

  it("takes a task's attempts and events with it, when its queue or its tenant is deleted, and nobody else's", async () => {
    const { tenantId, defaultQueueId } = await seedTenant(db);
    const other = await seedTenant(db);
    const gone = await seedPushQueue(db, tenantId, "gone", "http://127.0.0.1:1/");
    const inGone = await submitOne(tenantId, { type: "a", queue: "gone" });
    const kept = await submitOne(tenantId, { type: "b" });
    const elsewhere = await submitOne(other.tenantId, { type: "c" });
    for (const queueId of [defaultQueueId, other.defaultQueueId]) {
      const lease = await leaseOne(queueId);
      await completeAttempts(db, [{ taskId: lease!.task.id, leaseGeneration: lease!.task.leaseGeneration, result: null }], "test");
    }
    await startAttemptsByIds(db, [inGone.id], { workerId: "w1", leaseMs: 30_000, actor: "test" });
    expect(await children([inGone.id])).toEqual({ events: 2, attempts: 1 });

    await db.pool.query("DELETE FROM queues WHERE id = $1", [gone]);
    expect(await children([inGone.id])).toEqual({ events: 0, attempts: 0 });
    expect(await children([kept.id])).toEqual({ events: 3, attempts: 1 });

    await db.pool.query("DELETE FROM tenants WHERE id = $1", [tenantId]);
    expect(await children([kept.id])).toEqual({ events: 0, attempts: 0 });
    expect(await children([elsewhere.id])).toEqual({ events: 3, attempts: 1 });
  });

  it("empties attempts and events when tasks is truncated", async () => {
    const client = await db.pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("TRUNCATE tasks CASCADE");
      const left = await client.query<{ n: number }>("SELECT ((SELECT count(*) FROM task_events) + (SELECT count(*) FROM task_attempts))::int AS n");
      expect(left.rows[0]?.n).toBe(0);
    } finally {
      await client.query("ROLLBACK");
      client.release();
    }
    expect((await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM task_events")).rows[0]?.n).toBeGreaterThan(0);
  });
});

describe("the reconciler's sweep pages", () => {
  it("walk waiting PUSH tasks in id order, up to the id a pass started at when given one", async () => {
    const { tenantId } = await seedTenant(db);
    await seedPushQueue(db, tenantId, "swept", "http://127.0.0.1:9/never");
    const push = (type: string) => normalizeTaskSpec(parseInput(submitTaskInputSchema, { type, queue: "swept" }), Date.now());
    const before = (await submitTasks(db, tenantId, [push("a"), push("b"), push("c")], { horizonMs: 60_000 })).tasks.map((t) => t.id);
    const passEnd = newId(IdPrefix.task);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const after = (await submitTasks(db, tenantId, [push("d")], { horizonMs: 60_000 })).tasks.map((t) => t.id);
    const mine = (ids: string[]) => ids.filter((id) => [...before, ...after].includes(id));
    const walk = async (upTo: string | null, pageSize: number) => {
      const seen: string[] = [];
      let next: string | undefined = "";
      while (next !== undefined) {
        const page = await listTasksThatBelongInRedis(db, 60_000, next, pageSize, upTo);
        seen.push(...page.intents.map((i) => i.taskId));
        next = page.next;
      }
      return mine(seen);
    };
    expect(await walk(passEnd, 2)).toEqual([...before].sort());
    expect(await walk(null, 2)).toEqual([...before, ...after].sort());
  });
});
