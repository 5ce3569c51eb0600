import type { ReadableSpan } from "@opentelemetry/sdk-trace-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF, normalizeTaskSpec, normalizeWorkflowSpec, parseInput, submitTaskInputSchema, submitWorkflowInputSchema, type SubmitTaskInput } from "@tasklane/core";
import { createLogger, type SchedulerEnv } from "@tasklane/config";
import { createSchedule, type Database } from "@tasklane/db";
import { createTaskService, type TaskService } from "@tasklane/gateway/services/task-service";
import { WorkflowService } from "@tasklane/gateway/services/workflow-service";
import { fireSchedules } from "@tasklane/scheduler/loops/schedule-firing";
import { createSchedulerMetrics } from "@tasklane/scheduler/metrics";
import { createKeySpace, createRedis, createTaskDispatcher, dispatchAfterCommit } from "@tasklane/queue";
import type { Redis } from "ioredis";
import { useInMemoryTracing } from "../helpers/in-memory-tracing.js";
import { seedPushQueue, seedTenant } from "../helpers/seed.js";
import { createTestDatabase, uniqueRedisPrefix, type TestDatabase } from "../helpers/test-database.js";

/**
 * The gateway's submit path with tracing on, in process, against real
 * Postgres and Redis; spans are read from an in-memory exporter. Covers what
 * the cross-process tracing test cannot arrange: Redis refusing the
 * post-commit dispatch, and a repeat of an idempotency key.
 */
const REDIS_URL = "redis://127.0.0.1:6379/0";
const exporter = useInMemoryTracing();

let tdb: TestDatabase;
let tenantId: string;
let live: Redis;
let dead: Redis;
const prefix = uniqueRedisPrefix("subtrace");

function service(redis: Redis, db: Database = tdb.db): TaskService {
  return createTaskService({
    db,
    dispatcher: createTaskDispatcher(redis, createKeySpace(prefix)),
    log: createLogger("test", "silent"),
    horizonMs: 60_000,
    ringPullQueues: async () => undefined,
    announceCancel: async () => undefined,
  });
}

const spec = (input: Partial<SubmitTaskInput>) => normalizeTaskSpec(parseInput(submitTaskInputSchema, { type: "traced", queue: "push", ...input }), Date.now());
const spansOf = (name: string, taskId: string): ReadableSpan[] =>
  exporter.getFinishedSpans().filter((s) => s.name === name && s.attributes["tasklane.task_id"] === taskId);

beforeAll(async () => {
  tdb = await createTestDatabase("subtrace");
  ({ tenantId } = await seedTenant(tdb.db));
  await seedPushQueue(tdb.db, tenantId, "push", "http://127.0.0.1:9/never-called");
  live = createRedis(REDIS_URL, "test");
  // A client whose connection is closed: every dispatch through it is refused, as when Redis is unreachable.
  dead = createRedis(REDIS_URL, "test-dead");
  await dead.ping();
  dead.disconnect();
});

afterAll(async () => {
  if (live) {
    const keys = await live.keys(`${prefix}:*`);
    if (keys.length > 0) await live.del(...keys);
    live.disconnect();
  }
  await tdb?.drop();
});

describe("task.dispatch after commit", () => {
  it("ends with ERROR and says the outbox delivers the task when Redis refuses the fast path", async () => {
    const [task] = await service(dead).submit(tenantId, [spec({})], "test");
    const [dispatch] = spansOf("task.dispatch", task!.id);
    expect(dispatch?.status.code).toBe(2); // SpanStatusCode.ERROR
    expect(dispatch?.attributes["tasklane.dispatch.fallback"]).toBe("outbox");
    // The submission itself succeeded: its tasks are durable and in the outbox.
    expect(spansOf("task.submit", task!.id)[0]?.status.code).toBe(0);
    const { rows } = await tdb.db.pool.query("SELECT count(*)::int AS n FROM outbox WHERE task_id = $1 OR $1 = ANY(task_ids)", [task!.id]);
    expect(rows[0].n).toBe(1);
  });

  it("ends with ERROR for a workflow's tasks too when Redis refuses the fast path", async () => {
    const dispatcher = createTaskDispatcher(dead, createKeySpace(prefix));
    const workflows = new WorkflowService({
      db: tdb.db,
      log: createLogger("test", "silent"),
      horizonMs: 60_000,
      // As the gateway wires it (services/index.ts): the fast path, its failure reported to onError.
      dispatch: (intents, onError = () => undefined) => dispatchAfterCommit(tdb.db, dispatcher, intents, onError),
      ringPullQueues: async () => undefined,
      announceCancel: async () => undefined,
    });
    const input = parseInput(submitWorkflowInputSchema, { name: "wf", tasks: [{ key: "only", type: "wf", queue: "push" }] });
    const { tasks } = await workflows.submit(tenantId, normalizeWorkflowSpec(input, Date.now()), "test");
    const [dispatch] = spansOf("task.dispatch", tasks[0]!.task.id);
    expect(dispatch?.status.code).toBe(2);
    expect(dispatch?.attributes["tasklane.dispatch.fallback"]).toBe("outbox");
  });

  it("ends with ERROR for a cron run's task when Redis refuses the scheduler's fast path", async () => {
    const template = { type: "tick", queue: "push", payload: null, priority: "NORMAL" as const, maxAttempts: 1, backoff: { ...DEFAULT_BACKOFF }, timeoutSeconds: 60 };
    const schedule = await createSchedule(tdb.db, tenantId, {
      name: "traced-every-second", cron: "* * * * * *", timezone: "UTC", template, misfirePolicy: "SKIP", overlapPolicy: "SKIP", enabled: true,
    });
    await new Promise((r) => setTimeout(r, Math.max(0, (schedule.nextRunAt as Date).getTime() - Date.now()) + 50));
    const keys = createKeySpace(prefix);
    await fireSchedules(
      {
        env: { SCHEDULE_MISFIRE_GRACE_SECONDS: 30 } as SchedulerEnv,
        db: tdb.db,
        redis: live,
        keys,
        dispatcher: createTaskDispatcher(dead, keys),
        log: createLogger("test", "silent"),
        horizonMs: 60_000,
        metrics: createSchedulerMetrics(false),
      },
      1_000,
    );
    const { rows } = await tdb.db.pool.query<{ id: string }>("SELECT id FROM tasks WHERE schedule_id = $1", [schedule.id]);
    expect(rows.length).toBe(1);
    const [dispatch] = spansOf("task.dispatch", rows[0]!.id);
    expect(dispatch?.status.code).toBe(2);
    expect(dispatch?.attributes["tasklane.dispatch.fallback"]).toBe("outbox");
  });

  it("ends unset (OK) with no fallback when Redis takes the dispatch", async () => {
    const [task] = await service(live).submit(tenantId, [spec({})], "test");
    const [dispatch] = spansOf("task.dispatch", task!.id);
    expect(dispatch?.status.code).toBe(0);
    expect(dispatch?.attributes["tasklane.dispatch.fallback"]).toBeUndefined();
  });
});

describe("an idempotent repeat of a submission", () => {
  for (const shape of ["submit", "submitRefs"] as const) {
    it(`is marked as a repeat and linked to the task's trace (${shape})`, async () => {
      const tasks = service(live);
      const key = `key-${shape}-${Date.now()}`;
      const [first] = await tasks[shape](tenantId, [spec({ idempotencyKey: key })], "test");
      const [again] = await tasks[shape](tenantId, [spec({ idempotencyKey: key })], "test");
      expect(again!.id).toBe(first!.id);
      const submits = spansOf("task.submit", first!.id);
      expect(submits).toHaveLength(2);
      const [original, repeat] = submits as [ReadableSpan, ReadableSpan];
      expect(original.attributes["tasklane.idempotent_repeat"]).toBeUndefined();
      expect(repeat.attributes["tasklane.idempotent_repeat"]).toBe(true);
      expect(repeat.links.map((l) => [l.context.traceId, l.context.spanId])).toEqual([[original.spanContext().traceId, original.spanContext().spanId]]);
      // The task keeps the trace it was created in.
      const { rows } = await tdb.db.pool.query("SELECT trace_parent FROM tasks WHERE id = $1", [first!.id]);
      expect(rows[0].trace_parent).toBe(`00-${original.spanContext().traceId}-${original.spanContext().spanId}-01`);
    });
  }

  it("marks the second of two specs with one key in a single batch, not the first", async () => {
    const key = `key-batch-${Date.now()}`;
    const [a, b] = await service(live).submitRefs(tenantId, [spec({ idempotencyKey: key }), spec({ idempotencyKey: key })], "test");
    expect(b!.id).toBe(a!.id);
    const submits = spansOf("task.submit", a!.id);
    expect(submits.map((s) => s.attributes["tasklane.idempotent_repeat"])).toEqual([undefined, true]);
  });
});

describe("marking repeats of merged submissions", () => {
  /**
   * The test database behind a pool that records what the gateway sends:
   * each statement's text, and "connect" for each client checked out (a
   * transaction, such as the tenant-scoped getTask that used to read each
   * keyed task back).
   */
  function recordingDb(): { db: Database; sent: string[] } {
    const sent: string[] = [];
    const pool = tdb.db.pool;
    const recording = new Proxy(pool, {
      get(target, prop) {
        if (prop === "query") {
          return (query: string | { text: string }, ...rest: unknown[]) => {
            sent.push(typeof query === "string" ? query : query.text);
            return (target.query as (...args: unknown[]) => unknown)(query, ...rest);
          };
        }
        if (prop === "connect") {
          return () => {
            sent.push("connect");
            return target.connect();
          };
        }
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    return { db: { ...tdb.db, pool: recording }, sent };
  }
  const isInsert = (text: string) => text.includes("INSERT INTO tasks (");
  // Submitted at once, they merge: the coalescer lets two statements run and batches the rest.
  const concurrently = (tasks: TaskService, shape: "submit" | "submitRefs", keys: string[]) =>
    Promise.all(keys.map((key) => tasks[shape](tenantId, [spec({ idempotencyKey: key })], "merged")));

  for (const shape of ["submit", "submitRefs"] as const) {
    it(`reads nothing back for keyed submissions that are not repeats (${shape})`, async () => {
      const { db, sent } = recordingDb();
      const keys = Array.from({ length: 8 }, (_, i) => `fresh-${shape}-${Date.now()}-${i}`);
      const results = await concurrently(service(live, db), shape, keys);
      expect(sent.filter(isInsert).length).toBeLessThan(keys.length);
      expect(sent.filter((text) => !isInsert(text))).toEqual([]);
      for (const [task] of results) {
        const [submit] = spansOf("task.submit", task!.id);
        expect(submit?.attributes["tasklane.idempotent_repeat"]).toBeUndefined();
      }
    });

    it(`marks and links each repeat of a merged batch without reading tasks back (${shape})`, async () => {
      const keys = Array.from({ length: 8 }, (_, i) => `again-${shape}-${Date.now()}-${i}`);
      const originals = await concurrently(service(live), shape, keys);
      const { db, sent } = recordingDb();
      const repeats = await concurrently(service(live, db), shape, keys);
      expect(sent.filter(isInsert).length).toBeLessThan(keys.length);
      // Per statement: the insert and, for its repeats, the read of the existing rows it always made.
      expect(sent.filter((text) => text === "connect")).toEqual([]);
      expect(sent.length).toBe(2 * sent.filter(isInsert).length);
      repeats.forEach(([again], i) => {
        const original = originals[i]![0]!;
        expect(again!.id).toBe(original.id);
        const [first, repeat] = spansOf("task.submit", original.id) as [ReadableSpan, ReadableSpan];
        expect(repeat.attributes["tasklane.idempotent_repeat"]).toBe(true);
        expect(repeat.links.map((l) => l.context.spanId)).toEqual([first.spanContext().spanId]);
      });
    });
  }
});
