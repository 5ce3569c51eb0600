/**
 * A PUSH queue's resume (QueueService.setPaused, queue-redispatch.ts) on a
 * real Postgres and Redis: the request checks only its first pages, highest
 * priority first, and re-adds only the jobs that are gone; the rest of the
 * backlog is checked after the answer; a resume that a concurrent pause
 * overtook still puts the tasks back.
 */
import { randomBytes } from "node:crypto";
import { normalizeTaskSpec, parseInput, submitTaskInputSchema, upsertQueueInputSchema } from "@tasklane/core";
import { submitTasks, type DispatchIntent } from "@tasklane/db";
import { MissingJobFinder, createKeySpace, createRedis, createTaskDispatcher, jobIdFor } from "@tasklane/queue";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PullQueueCache } from "../../apps/gateway/src/services/pull-queue-cache.js";
import { QueueService } from "../../apps/gateway/src/services/queue-service.js";
import { seedPushQueue, seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

const redis = createRedis("redis://127.0.0.1:6379/0", "redispatch-test");
const keys = createKeySpace(`tl-redispatch-${randomBytes(4).toString("hex")}`);
const dispatcher = createTaskDispatcher(redis, keys);
const finder = new MissingJobFinder(redis, keys);
const TRACE = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
let t: TestDatabase;
/** Every intent the queue service dispatched, in order. */
const dispatched: DispatchIntent[] = [];
const errors: unknown[] = [];
let queues: QueueService;

beforeAll(async () => {
  t = await createTestDatabase("redispatch");
  queues = new QueueService(t.db, {
    allowPrivateTargets: true,
    pullQueues: new PullQueueCache(t.db),
    redispatch: {
      dispatcher: { dispatch: async (intents) => void dispatched.push(...intents) },
      finder,
      horizonMs: 60_000,
      pageSize: 100,
      onError: (error) => errors.push(error),
    },
  });
});

afterAll(async () => {
  await redis.eval("for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end", 0, `${keys.prefix}:*`);
  redis.disconnect();
  await t?.drop();
});

async function submit(tenantId: string, queue: string, n: number, priority: string, { toRedis = true } = {}): Promise<DispatchIntent[]> {
  const specs = Array.from({ length: n }, () => normalizeTaskSpec(parseInput(submitTaskInputSchema, { type: "t", queue, priority }), Date.now()));
  const { dispatch } = await submitTasks(t.db, tenantId, specs, { horizonMs: 60_000 });
  if (toRedis) await dispatcher.dispatch(dispatch);
  return dispatch;
}

/**
 * Runs `change` while another transaction holds the queue's row lock, and commits a pause there
 * once `change` waits for that lock: the pause lands between whatever `change` read before and its write.
 */
async function pausedUnder<T>(queueId: string, change: () => Promise<T>): Promise<T> {
  const locker = await t.db.pool.connect();
  try {
    await locker.query("BEGIN");
    await locker.query("SELECT 1 FROM queues WHERE id = $1 FOR UPDATE", [queueId]);
    const changing = change();
    for (let waited = 0; ; waited += 20) {
      const { rows } = await t.db.pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
      if (rows[0].n > 0) break;
      if (waited > 10_000) throw new Error("the change never waited for the queue's row lock");
      await new Promise((r) => setTimeout(r, 20));
    }
    await locker.query("UPDATE queues SET paused = true WHERE id = $1", [queueId]);
    await locker.query("COMMIT");
    return await changing;
  } finally {
    locker.release();
  }
}

describe("resuming a PUSH queue with a backlog deeper than the request's pages", () => {
  it("re-adds in the request only the gone jobs of the first page, and the rest's after the answer", async () => {
    const { tenantId } = await seedTenant(t.db);
    const queueId = await seedPushQueue(t.db, tenantId, "deep", "http://127.0.0.1:9/hook");
    await queues.setPaused(tenantId, "deep", true);
    const high = await submit(tenantId, "deep", 50, "HIGH");
    const low = await submit(tenantId, "deep", 200, "LOW");
    await t.db.pool.query("UPDATE tasks SET trace_parent = $2 WHERE queue_id = $1", [queueId, TRACE]);
    // Jobs a stale worker took while the queue was paused: three HIGH (first page), three LOW at the end (third page).
    const lost = [...high.slice(0, 3), ...low.slice(-3)];
    const name = keys.bullQueueName(tenantId, queueId);
    await redis.del(...lost.map((i) => keys.jobKey(name, jobIdFor(i.taskId, i.dispatchGeneration))));
    expect(await finder.goneOf([...high, ...low])).toHaveLength(6);

    dispatched.length = 0;
    await queues.setPaused(tenantId, "deep", false);
    // Answered: the first page's gone jobs are back, nothing else was added (all 250 were, one page of 2,000 at a time).
    expect(dispatched.map((i) => i.taskId).sort()).toEqual(high.slice(0, 3).map((i) => i.taskId).sort());
    await queues.settled();
    expect(dispatched.map((i) => i.taskId).sort()).toEqual(lost.map((i) => i.taskId).sort());
    expect(dispatched.every((i) => i.tenantId === tenantId && i.traceParent === TRACE)).toBe(true);
    expect(errors).toEqual([]);
  });
});

describe("a resume that a concurrent pause overtook", () => {
  // The queue runs when the resume reads it; a pause commits before the resume's write. The write turns a
  // paused queue into a running one, so its tasks must go back to Redis.
  it("setPaused(false) tells it was paused from its own UPDATE", async () => {
    const { tenantId } = await seedTenant(t.db);
    const queueId = await seedPushQueue(t.db, tenantId, "race", "http://127.0.0.1:9/hook");
    const [waiting] = await submit(tenantId, "race", 1, "NORMAL", { toRedis: false });
    dispatched.length = 0;
    const row = await pausedUnder(queueId, () => queues.setPaused(tenantId, "race", false));
    expect(row.paused).toBe(false);
    expect(dispatched.map((i) => i.taskId)).toEqual([waiting?.taskId]);
  });

  it("upsertQueue with paused: false reads the queue it writes under the row's lock", async () => {
    const { tenantId } = await seedTenant(t.db);
    const queueId = await seedPushQueue(t.db, tenantId, "race-up", "http://127.0.0.1:9/hook");
    const [waiting] = await submit(tenantId, "race-up", 1, "NORMAL", { toRedis: false });
    dispatched.length = 0;
    const row = await pausedUnder(queueId, () => queues.upsert(tenantId, parseInput(upsertQueueInputSchema, { name: "race-up", mode: "PUSH", paused: false })));
    expect(row.paused).toBe(false);
    expect(dispatched.map((i) => i.taskId)).toEqual([waiting?.taskId]);
  });
});
