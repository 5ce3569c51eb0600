/**
 * FairFetcher (worker) in-process on a real Postgres and Redis: the jobs a
 * fetch took from a queue that came up short start without waiting for that
 * queue's bookkeeping (markDrained: when to look again, leaving the active
 * set; a Redis round trip), which a tenant trickling in tasks pays on every
 * fetch. The bookkeeping is held open here until the start is seen.
 * And a start statement takes up to 50 tasks while one tenant has work, 25
 * once two do.
 */
import { randomBytes } from "node:crypto";
import { createLogger, loadEnv, workerEnvSchema } from "@tasklane/config";
import { normalizeTaskSpec, parseInput, submitTaskInputSchema } from "@tasklane/core";
import { ServerClock } from "@tasklane/core/server-clock";
import { submitTasks } from "@tasklane/db";
import { createKeySpace, createRedis, createTaskDispatcher } from "@tasklane/queue";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CompletionBatcher } from "../../apps/worker/src/completion-batcher.js";
import type { WorkerContext } from "../../apps/worker/src/context.js";
import { ActiveQueues } from "../../apps/worker/src/fetch/active-queues.js";
import { FairFetcher } from "../../apps/worker/src/fetch/fair-fetcher.js";
import { QueueDirectory } from "../../apps/worker/src/fetch/queue-directory.js";
import { createWorkerMetrics } from "../../apps/worker/src/metrics.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { seedPushQueue, seedTenant } from "../helpers/seed.js";
import { waitFor } from "../helpers/app-process.js";

const prefix = `tl-fetch-${randomBytes(4).toString("hex")}`;
const redis = createRedis("redis://127.0.0.1:6379/0", "fair-fetcher-test");
const keys = createKeySpace(prefix);
let t: TestDatabase;
let directory: QueueDirectory;
const agent = new Agent();

/** markDrained waits for this gate (a seam on our own class; Redis and Postgres are real). */
let openGate: () => void = () => undefined;
const gate = new Promise<void>((resolve) => (openGate = resolve));
let bookkeepingCalls = 0;
let bookkeepingDone = 0;
const markDrained = ActiveQueues.prototype.markDrained;

beforeAll(async () => {
  t = await createTestDatabase("fetch");
  directory = new QueueDirectory(t.db, () => undefined);
  await directory.start();
  ActiveQueues.prototype.markDrained = async function (this: ActiveQueues, ...args: Parameters<typeof markDrained>) {
    bookkeepingCalls++;
    await gate;
    await markDrained.apply(this, args);
    bookkeepingDone++;
  };
});

afterAll(async () => {
  ActiveQueues.prototype.markDrained = markDrained;
  directory?.stop();
  const stale = await redis.keys(`${prefix}:*`);
  if (stale.length > 0) await redis.del(...stale);
  redis.disconnect();
  await agent.close();
  await t?.drop();
});

function workerContext(dispatcher: WorkerContext["dispatcher"], env: Record<string, string> = {}): WorkerContext {
  return {
    env: loadEnv(workerEnvSchema, { REDIS_KEY_PREFIX: prefix, LOG_LEVEL: "silent", ...env }),
    workerId: "fetch-test",
    db: t.db,
    redis,
    keys,
    dispatcher,
    directory,
    completions: new CompletionBatcher(t.db, "worker:fetch-test", async () => undefined, 60_000),
    agent,
    log: createLogger("worker", "silent"),
    horizonMs: 60_000,
    serverClock: new ServerClock(),
    metrics: createWorkerMetrics(),
  };
}

/** Tasks queued on a new PUSH queue of the tenant and placed in Redis. */
async function queueTasks(tenantId: string, queue: string, count: number, dispatcher: WorkerContext["dispatcher"]): Promise<{ queueName: string; ids: string[] }> {
  await seedPushQueue(t.db, tenantId, queue, "http://127.0.0.1:9/hook");
  const spec = normalizeTaskSpec(parseInput(submitTaskInputSchema, { type: "t", queue }), Date.now());
  const submitted = await submitTasks(t.db, tenantId, Array.from({ length: count }, () => spec), { horizonMs: 60_000 });
  await dispatcher.dispatch(submitted.dispatch);
  return { queueName: keys.bullQueueName(tenantId, submitted.tasks[0]!.queueId), ids: submitted.tasks.map((task) => task.id) };
}

/**
 * How many tasks each start statement took, in the order they ran: a start
 * statement is one transaction, so the attempts it inserted share its xmin.
 */
async function startStatementSizes(taskIds: string[]): Promise<number[]> {
  const res = await t.db.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM task_attempts WHERE task_id = ANY($1::text[]) GROUP BY xmin ORDER BY xmin::text::bigint",
    [taskIds],
  );
  return res.rows.map((r) => r.n);
}

/** Starts every queued job with the given slots until `count` attempts have started; each attempt's request is over at once. */
async function startAll(ctx: WorkerContext, queueNames: string[], count: number): Promise<void> {
  let started = 0;
  const fetcher = new FairFetcher(ctx, async (_attempt, executed) => {
    started++;
    executed();
  });
  fetcher.start();
  for (const name of queueNames) fetcher.ring(name);
  await waitFor(`${count} starts`, async () => started >= count, 20_000, 20);
  await fetcher.stop();
}

describe("FairFetcher", () => {
  it("starts the jobs of a queue that came up short before that queue's bookkeeping is done", async () => {
    const { tenantId } = await seedTenant(t.db);
    const dispatcher = createTaskDispatcher(redis, keys);
    const { queueName, ids } = await queueTasks(tenantId, "hooks", 1, dispatcher);
    await directory.refresh();

    const ctx = workerContext(dispatcher);
    const started: string[] = [];
    const fetcher = new FairFetcher(ctx, async (attempt, executed) => {
      started.push(attempt.task.id);
      executed();
    });
    fetcher.start();
    fetcher.ring(queueName);

    // The fetch wanted more than the one job there was: the queue came up short and its bookkeeping is held open.
    await waitFor("the task to start", async () => started.length === 1, 10_000, 20);
    expect(started).toEqual(ids);
    expect(bookkeepingCalls).toBeGreaterThanOrEqual(1);
    expect(bookkeepingDone).toBe(0);

    openGate();
    await fetcher.stop();
    // Stopping waited for the bookkeeping: the drained queue left the shared active set.
    expect(bookkeepingDone).toBe(bookkeepingCalls);
    expect(await redis.sismember(keys.activeQueues, queueName)).toBe(0);
  });

  it("starts up to 50 tasks a statement while one tenant has work, and 25 once two tenants have", async () => {
    openGate();
    const dispatcher = createTaskDispatcher(redis, keys);
    const ctx = workerContext(dispatcher, { WORKER_CONCURRENCY: "300" });

    const alone = await seedTenant(t.db);
    const solo = await queueTasks(alone.tenantId, "solo", 200, dispatcher);
    await directory.refresh();
    await startAll(ctx, [solo.queueName], 200);
    const aloneSizes = await startStatementSizes(solo.ids);
    expect(aloneSizes.reduce((a, b) => a + b, 0)).toBe(200);
    expect(Math.max(...aloneSizes)).toBe(50);

    const a = await seedTenant(t.db);
    const b = await seedTenant(t.db);
    const backlogA = await queueTasks(a.tenantId, "a", 150, dispatcher);
    const backlogB = await queueTasks(b.tenantId, "b", 150, dispatcher);
    await directory.refresh();
    await startAll(ctx, [backlogA.queueName, backlogB.queueName], 300);
    const sharedSizes = await startStatementSizes([...backlogA.ids, ...backlogB.ids]);
    expect(sharedSizes.reduce((x, y) => x + y, 0)).toBe(300);
    // Only the first statement can be bigger: it is collected before the fetcher has seen who has work.
    expect(Math.max(...sharedSizes)).toBeLessThanOrEqual(50);
    expect(sharedSizes.filter((n) => n > 25).length).toBeLessThanOrEqual(1);
  });

  it("sleeps while its only ready queue is paused, rather than looking again every millisecond", async () => {
    openGate();
    const dispatcher = createTaskDispatcher(redis, keys);
    const { tenantId } = await seedTenant(t.db);
    const { queueName } = await queueTasks(tenantId, "paused", 1, dispatcher);
    await t.db.pool.query("UPDATE queues SET paused = true WHERE tenant_id = $1 AND name = 'paused'", [tenantId]);
    await directory.refresh();

    const ready = ActiveQueues.prototype.ready;
    let looks = 0;
    ActiveQueues.prototype.ready = function (this: ActiveQueues, ...args: Parameters<typeof ready>) {
      looks++;
      return ready.apply(this, args);
    };
    const started: string[] = [];
    const fetcher = new FairFetcher(workerContext(dispatcher), async (attempt, executed) => {
      started.push(attempt.task.id);
      executed();
    });
    try {
      fetcher.start();
      fetcher.ring(queueName);
      await new Promise((r) => setTimeout(r, 1_500));
    } finally {
      await fetcher.stop();
      ActiveQueues.prototype.ready = ready;
    }
    expect(started).toEqual([]);
    // Once at the ring, then about once a second: a paused queue is looked at again after IDLE_POLL_MS.
    expect(looks).toBeLessThanOrEqual(10);
  });
});
