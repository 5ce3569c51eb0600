/**
 * The scheduler's firing loop while Redis is unreachable: a CANCEL_RUNNING
 * schedule cancels its running run in Postgres and goes on. Its announcement
 * to the workers is best effort (they learn it from the attempt's outcome or
 * heartbeat); awaited unbounded, ioredis held the PUBLISH until Redis came
 * back and every schedule of every tenant stopped firing meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF } from "@tasklane/core";
import { createLogger, type SchedulerEnv } from "@tasklane/config";
import { createSchedule } from "@tasklane/db";
import { fireSchedules } from "@tasklane/scheduler/loops/schedule-firing";
import { createSchedulerMetrics } from "@tasklane/scheduler/metrics";
import { createKeySpace, createRedis, createTaskDispatcher } from "@tasklane/queue";
import type { Redis } from "ioredis";
import { freePort } from "../helpers/free-port.js";
import { seedPushQueue, seedTenant } from "../helpers/seed.js";
import { createTestDatabase, uniqueRedisPrefix, type TestDatabase } from "../helpers/test-database.js";

let tdb: TestDatabase;
let unreachable: Redis;

beforeAll(async () => {
  tdb = await createTestDatabase("firing_redis_down");
  // Nothing listens there: the client keeps reconnecting and, as in production, queues its commands meanwhile.
  unreachable = createRedis(`redis://127.0.0.1:${await freePort()}/0`, "test-unreachable");
  unreachable.on("error", () => undefined);
});

afterAll(async () => {
  unreachable?.disconnect();
  await tdb?.drop();
});

describe("firing schedules while Redis is unreachable", () => {
  it("cancels a CANCEL_RUNNING schedule's running run and returns, announcement or not", async () => {
    const { tenantId } = await seedTenant(tdb.db);
    await seedPushQueue(tdb.db, tenantId, "push", "http://127.0.0.1:9/never-called");
    const template = { type: "tick", queue: "push", payload: null, priority: "NORMAL" as const, maxAttempts: 1, backoff: { ...DEFAULT_BACKOFF }, timeoutSeconds: 60 };
    const schedule = await createSchedule(tdb.db, tenantId, {
      name: "cancel-running", cron: "* * * * * *", timezone: "UTC", template, misfirePolicy: "SKIP", overlapPolicy: "CANCEL_RUNNING", enabled: true,
    });
    // A run of the schedule that a worker is executing.
    const running = (
      await tdb.db.pool.query<{ id: string }>(
        `INSERT INTO tasks (id, tenant_id, queue_id, type, status, run_at, started_at, attempts, max_attempts, backoff_strategy,
                            backoff_delay_seconds, backoff_jitter, timeout_seconds, schedule_id, lease_token, lease_expires_at, lease_generation)
         SELECT 'task_0000000000000000000000000000run1', $1, q.id, 'tick', 'RUNNING', now() - interval '1 second', now(), 1, 1, 'EXPONENTIAL',
                1, false, 60, $2, 'lease-1', now() + interval '60 seconds', 1
         FROM queues q WHERE q.tenant_id = $1 AND q.name = 'push' RETURNING id`,
        [tenantId, schedule.id],
      )
    ).rows[0]!.id;
    await new Promise((r) => setTimeout(r, Math.max(0, (schedule.nextRunAt as Date).getTime() - Date.now()) + 50));
    const keys = createKeySpace(uniqueRedisPrefix("firing"));
    const fired = fireSchedules(
      {
        env: { SCHEDULE_MISFIRE_GRACE_SECONDS: 30 } as SchedulerEnv,
        db: tdb.db,
        redis: unreachable,
        keys,
        dispatcher: createTaskDispatcher(unreachable, keys),
        log: createLogger("test", "silent"),
        horizonMs: 60_000,
        metrics: createSchedulerMetrics(false),
      },
      1_000,
    );
    const outcome = await Promise.race([fired.then(() => "returned"), new Promise((r) => setTimeout(() => r("still waiting"), 8_000))]);
    expect(outcome).toBe("returned");
    const { rows } = await tdb.db.pool.query<{ id: string; status: string }>("SELECT id, status FROM tasks WHERE schedule_id = $1 ORDER BY created_at", [schedule.id]);
    expect(rows.find((r) => r.id === running)?.status).toBe("CANCELLED");
    expect(rows.filter((r) => r.id !== running).map((r) => r.status)).toEqual(["QUEUED"]);
  });
});
