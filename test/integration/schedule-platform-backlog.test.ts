import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF } from "@tasklane/core";
import { PLATFORM_BACKLOG_FULL, createSchedule, fireDueSchedules, submitTasks } from "@tasklane/db";
import { startApp, waitFor } from "../helpers/app-process.js";
import { countingDatabase } from "../helpers/counting-database.js";
import { REDIS_DB, redisUrl } from "../helpers/redis-dbs.js";
import { seedTenant } from "../helpers/seed.js";
import { createTestDatabase, uniqueRedisPrefix, type TestDatabase } from "../helpers/test-database.js";

/**
 * Cron runs answer to the platform's backlog cap (GLOBAL_MAX_PENDING_TASKS)
 * as submissions do: a tenant whose backlog fills it has its runs recorded
 * SKIPPED, saying so, rather than growing a backlog that makes the gateway
 * refuse every tenant's submissions. A real scheduler process reads the cap
 * from its environment.
 */
let tdb: TestDatabase;
const template = { type: "tick", queue: "default", payload: null, priority: "NORMAL" as const, maxAttempts: 1, backoff: { ...DEFAULT_BACKOFF }, timeoutSeconds: 60 };

beforeAll(async () => {
  tdb = await createTestDatabase("schedbacklog");
});
afterAll(async () => tdb?.drop());

describe("cron runs and GLOBAL_MAX_PENDING_TASKS", () => {
  it("are SKIPPED for the tenant holding a backlog past the cap", async () => {
    const { tenantId } = await seedTenant(tdb.db);
    const one = () => ({ ...template, runAt: new Date(), idempotencyKey: null, orderingKey: null, callbackUrl: null, metadata: null });
    // 30 tasks nobody takes (a PULL queue without workers), past a cap of 20.
    await submitTasks(tdb.db, tenantId, Array.from({ length: 30 }, one), { horizonMs: 60_000 });
    const s = await createSchedule(tdb.db, tenantId, { name: "every-second", cron: "* * * * * *", timezone: "UTC", template, misfirePolicy: "SKIP", overlapPolicy: "ALLOW", enabled: true });
    const scheduler = startApp("scheduler", {
      DATABASE_URL: tdb.url,
      REDIS_URL: redisUrl(REDIS_DB.schedules),
      REDIS_KEY_PREFIX: uniqueRedisPrefix("schbl"),
      LOG_LEVEL: "warn",
      GLOBAL_MAX_PENDING_TASKS: "20",
    });
    const runs = async () =>
      (await tdb.db.pool.query<{ status: string; last_error: string | null }>(`SELECT status, last_error FROM tasks WHERE schedule_id = $1 ORDER BY run_at`, [s.id])).rows;
    try {
      await waitFor("three occurrences", async () => (await runs()).length >= 3, 30_000, 100);
    } finally {
      await scheduler.stop();
    }
    const r = await runs();
    expect(r.map((x) => [x.status, x.last_error])).toEqual(r.map(() => ["SKIPPED", PLATFORM_BACKLOG_FULL]));
    const pending = await tdb.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM tasks WHERE tenant_id = $1 AND status IN ('SCHEDULED', 'QUEUED')`, [tenantId]);
    expect(pending.rows[0]!.n).toBe(30);
  }, 60_000);

  it("are SKIPPED a window at a time for an overlap-SKIP schedule's CATCH_UP recovery, not one statement pair per occurrence", async () => {
    const { tenantId } = await seedTenant(tdb.db);
    const s = await createSchedule(tdb.db, tenantId, { name: "catch-up-skip", cron: "* * * * * *", timezone: "UTC", template, misfirePolicy: "CATCH_UP", overlapPolicy: "SKIP", enabled: true });
    // Down for ten minutes: CATCH_UP fires each missed second, and the cap (a double that refuses all) holds every one back.
    await tdb.db.pool.query(`UPDATE schedules SET next_run_at = date_trunc('second', now()) - interval '600 seconds' WHERE id = $1`, [s.id]);
    const counting = countingDatabase(tdb.url);
    try {
      const result = await fireDueSchedules(counting.db, { lookaheadMs: 0, horizonMs: 60_000, limit: 100, backlog: { admits: () => false } });
      expect(result.overQuota).toBeGreaterThanOrEqual(600);
    } finally {
      await counting.db.close();
    }
    const runs = (await tdb.db.pool.query<{ status: string; last_error: string | null }>(`SELECT status, last_error FROM tasks WHERE schedule_id = $1`, [s.id])).rows;
    expect(runs.length).toBeGreaterThanOrEqual(600);
    expect(runs.filter((r) => r.status !== "SKIPPED" || r.last_error !== PLATFORM_BACKLOG_FULL)).toEqual([]);
    // Deciding one by one: a look at the previous run and an insert for each of the 600.
    expect(counting.statements()).toBeLessThan(30);
  }, 60_000);
});
