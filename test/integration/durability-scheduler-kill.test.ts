/**
 * The outbox dispatcher SIGKILLed in the middle of its batches. Tasks are
 * committed with their dispatch rows and never handed to Redis by their
 * writer (a gateway that died between commit and its post-commit dispatch),
 * so the scheduler's outbox drain is their only way in. The scheduler is
 * killed again and again while it drains (each claim deletes up to 50 rows,
 * enqueues their tasks and commits); whatever a killed claim enqueued but did
 * not commit is claimed again, and the repeat adds nothing (the reconciler's
 * sweep, which each new scheduler starts with, re-adds what it finds
 * missing too: the same job ids). Then a worker runs everything: each task
 * SUCCEEDED once, one request each.
 */
import { normalizeTaskSpec, parseInput, submitTaskInputSchema } from "@tasklane/core";
import { submitTasks } from "@tasklane/db";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from "../helpers/platform.js";
import { printAppLogsOnFailure, startServingApp } from "../helpers/ready-apps.js";
import { seedPushQueue, seedTenant } from "../helpers/seed.js";

const STATEMENTS = 300;
const TASKS_PER_STATEMENT = 10;
const TASKS = STATEMENTS * TASKS_PER_STATEMENT;
const KILLS = 6;

let tdb: TestDatabase;
let testRedis: TestRedis;
let redis: Redis;
let receiver: HttpReceiver;
const apps: AppProcess[] = [];

const env = () => ({
  DATABASE_URL: tdb.url,
  REDIS_URL: testRedis.url,
  REDIS_KEY_PREFIX: testRedis.prefix,
  ALLOW_PRIVATE_TARGETS: "1",
  LOG_LEVEL: "warn",
});

beforeAll(async () => {
  tdb = await createTestDatabase("durschedkill");
  testRedis = createTestRedis();
  redis = new Redis(testRedis.url, { maxRetriesPerRequest: 1 });
  receiver = await startReceiver();
});

afterAll(async () => {
  for (const app of apps) app.kill();
  await Promise.all(apps.map((a) => a.exited));
  await receiver?.close();
  redis?.disconnect();
  await testRedis?.cleanup();
  await tdb?.drop();
});

const count = async (sql: string, params: unknown[] = []) => (await tdb.db.pool.query<{ n: number }>(sql, params)).rows[0]!.n;
const outboxTasks = () => count("SELECT coalesce(sum(coalesce(cardinality(task_ids), 1)), 0)::int AS n FROM outbox WHERE kind = 'DISPATCH_TASK'");
async function jobsInRedis(): Promise<number> {
  let n = 0;
  for (const key of await redis.keys(`${testRedis.prefix}:*:prioritized`)) n += await redis.zcard(key);
  return n;
}

describe("durability: the outbox dispatcher killed mid-batch", () => {
  printAppLogsOnFailure(apps);

  it("delivers every committed task once, however often it dies while draining", async () => {
    const { tenantId } = await seedTenant(tdb.db);
    await seedPushQueue(tdb.db, tenantId, "push", `${receiver.url}/run`);
    for (let s = 0; s < STATEMENTS; s++) {
      const specs = Array.from({ length: TASKS_PER_STATEMENT }, (_, i) => normalizeTaskSpec(parseInput(submitTaskInputSchema, { queue: "push", type: `t${s}-${i}` }), Date.now()));
      await submitTasks(tdb.db, tenantId, specs, { horizonMs: 60_000 });
    }
    expect(await outboxTasks()).toBe(TASKS);
    // An epoch, as a running platform has: otherwise the first scheduler's rebuild would re-add everything itself.
    await redis.set(`${testRedis.prefix}:epoch`, "durability-test");
    // Past the fast path's grace (2 s): the rows are the dispatcher's.
    await new Promise((r) => setTimeout(r, 2_100));

    /** After each kill: jobs in Redis / tasks still in the outbox. */
    const afterKills: string[] = [];
    for (let k = 0; k < KILLS && (await outboxTasks()) > 0; k++) {
      const scheduler = startApp("scheduler", env());
      apps.push(scheduler);
      const [jobsBefore, outboxBefore] = [await jobsInRedis(), await outboxTasks()];
      // Killed as soon as it shows work (jobs arriving, or claims committed), a little later each round.
      await waitFor("the scheduler at work", async () => (await jobsInRedis()) > jobsBefore || (await outboxTasks()) < outboxBefore || scheduler.child.exitCode !== null, 30_000, 5);
      await new Promise((r) => setTimeout(r, k * 15));
      scheduler.kill("SIGKILL");
      await scheduler.exited;
      afterKills.push(`${await jobsInRedis()}/${await outboxTasks()}`);
    }
    const left = await outboxTasks();
    apps.push((await startServingApp("scheduler", env())).app);
    await waitFor("the outbox drained", async () => (await outboxTasks()) === 0, 30_000, 50);
    expect(await jobsInRedis()).toBe(TASKS);
    apps.push((await startServingApp("worker", env())).app);
    await waitFor("every task SUCCEEDED", async () => (await count("SELECT count(*)::int AS n FROM tasks WHERE status = 'SUCCEEDED'")) === TASKS, 60_000, 100);

    const attempts = await tdb.db.pool.query<{ attempts: number; n: number }>("SELECT attempts, count(*)::int AS n FROM tasks GROUP BY attempts");
    expect(attempts.rows).toEqual([{ attempts: 1, n: TASKS }]);
    expect(await count("SELECT count(*)::int AS n FROM task_attempts WHERE outcome = 'SUCCEEDED'")).toBe(TASKS);
    const perTask = new Map<string, number>();
    for (const r of receiver.requests) {
      const id = (r.json as { taskId: string }).taskId;
      perTask.set(id, (perTask.get(id) ?? 0) + 1);
    }
    expect(perTask.size).toBe(TASKS);
    expect([...perTask.values()].every((n) => n === 1)).toBe(true);
    console.log(
      `${TASKS} tasks in ${STATEMENTS} outbox rows; ${afterKills.length} kills while draining (jobs in Redis / tasks in the outbox after each: ${afterKills.join(", ")}); ${left} left in the outbox for the last scheduler; each SUCCEEDED once (duplicates 0)`,
    );
  }, 180_000);
});
