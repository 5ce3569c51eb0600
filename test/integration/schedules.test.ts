import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF, type MisfirePolicy, type OverlapPolicy } from "@tasklane/core";
import { createSchedule, deleteSchedule, listScheduleRuns, updateSchedule, type ScheduleRecord } from "@tasklane/db";
import { startApp, waitFor, type AppProcess } from "../helpers/app-process.js";
import { REDIS_DB, redisUrl } from "../helpers/redis-dbs.js";
import { seedTenant } from "../helpers/seed.js";
import { createTestDatabase, uniqueRedisPrefix, type TestDatabase } from "../helpers/test-database.js";

/**
 * Cron schedules with real scheduler processes: exactly one run per
 * occurrence with several schedulers at once, and misfire policies after a
 * real outage. Runs go to the PULL queue "default" with no consumer, so every
 * run stays unfinished (which is what the overlap policies look at).
 */
let tdb: TestDatabase;
let tenantId: string;
const env = (graceSeconds = 1) => ({
  DATABASE_URL: tdb.url,
  REDIS_URL: redisUrl(REDIS_DB.schedules),
  REDIS_KEY_PREFIX: uniqueRedisPrefix("sch"),
  LOG_LEVEL: "warn",
  SCHEDULE_MISFIRE_GRACE_SECONDS: String(graceSeconds),
});
const editor = { actor: "test", horizonMs: 60_000 };
/** A run that was materialised to execute (QUEUED, or SCHEDULED when materialised ahead of its instant). */
const live = (status: string) => status === "QUEUED" || status === "SCHEDULED";

const template = { type: "tick", queue: "default", payload: null, priority: "NORMAL" as const, maxAttempts: 1, backoff: { ...DEFAULT_BACKOFF }, timeoutSeconds: 60 };

function define(name: string, cron: string, overrides: { misfirePolicy?: MisfirePolicy; overlapPolicy?: OverlapPolicy } = {}) {
  return createSchedule(tdb.db, tenantId, {
    name,
    cron,
    timezone: "UTC",
    template,
    misfirePolicy: overrides.misfirePolicy ?? "SKIP",
    overlapPolicy: overrides.overlapPolicy ?? "ALLOW",
    enabled: true,
  });
}

async function runsOf(s: ScheduleRecord) {
  const res = await tdb.db.pool.query(
    "SELECT occurrence_key, status, run_at FROM tasks WHERE schedule_id = $1 ORDER BY run_at",
    [s.id],
  );
  return res.rows as { occurrence_key: string | null; status: string; run_at: Date }[];
}

beforeAll(async () => {
  tdb = await createTestDatabase("sched");
  ({ tenantId } = await seedTenant(tdb.db));
});
afterAll(async () => tdb?.drop());

describe("cron schedules with three schedulers", () => {
  let schedulers: AppProcess[] = [];
  afterAll(async () => Promise.all(schedulers.map((s) => s.stop())));

  it("materialises exactly one run per occurrence, with no gaps, for 6-field and overlap-checked schedules", async () => {
    const everyTwo = await define("every-2s", "*/2 * * * * *");
    const everySecondSkip = await define("every-1s-skip", "* * * * * *", { overlapPolicy: "SKIP" });
    // Default grace: process start-up must not turn the first occurrences into misfires.
    const shared = env(30);
    schedulers = [startApp("scheduler", shared), startApp("scheduler", shared), startApp("scheduler", shared)];
    const started = Date.now();
    await new Promise((r) => setTimeout(r, 20_000));
    await Promise.all(schedulers.map((s) => s.stop()));
    const stoppedAt = Date.now();

    const twos = await runsOf(everyTwo);
    const keys = twos.map((r) => r.occurrence_key);
    expect(new Set(keys).size).toBe(keys.length);
    // Every 2 s for ~20 s: consecutive runs exactly 2 s apart, none missing.
    expect(twos.length).toBeGreaterThanOrEqual(8);
    for (let i = 1; i < twos.length; i++) expect(twos[i]!.run_at.getTime() - twos[i - 1]!.run_at.getTime()).toBe(2000);
    expect(twos.every((r) => r.run_at.getTime() % 2000 === 0)).toBe(true);
    expect(twos[0]!.run_at.getTime()).toBeGreaterThanOrEqual(started - 2000);
    expect(twos[twos.length - 1]!.run_at.getTime()).toBeLessThanOrEqual(stoppedAt + 2500);

    const ones = await runsOf(everySecondSkip);
    expect(new Set(ones.map((r) => r.occurrence_key)).size).toBe(ones.length);
    for (let i = 1; i < ones.length; i++) expect(ones[i]!.run_at.getTime() - ones[i - 1]!.run_at.getTime()).toBe(1000);
    // The first run never finishes (no consumer), so every later occurrence is visibly SKIPPED.
    expect(live(ones[0]!.status)).toBe(true);
    expect(ones.slice(1).every((r) => r.status === "SKIPPED")).toBe(true);
    expect(ones.length).toBeGreaterThanOrEqual(15);
  }, 60_000);
});

describe("misfire policies after an outage", () => {
  it("SKIP records missed occurrences as SKIPPED, FIRE_ONCE runs once, CATCH_UP runs each", async () => {
    const skip = await define("m-skip", "* * * * * *", { misfirePolicy: "SKIP" });
    const once = await define("m-once", "* * * * * *", { misfirePolicy: "FIRE_ONCE" });
    const catchUp = await define("m-catch", "* * * * * *", { misfirePolicy: "CATCH_UP" });
    // No scheduler runs while several occurrences pass.
    await new Promise((r) => setTimeout(r, 5_000));
    const scheduler = startApp("scheduler", env());
    try {
      await waitFor("catch-up runs", async () => (await runsOf(catchUp)).length >= 5, 40_000);
      await new Promise((r) => setTimeout(r, 1_500));
    } finally {
      await scheduler.stop();
    }
    const s = await runsOf(skip);
    const missedS = s.filter((r) => r.status === "SKIPPED");
    expect(missedS.length).toBeGreaterThanOrEqual(3);
    // The missed ones come first; after recovery each occurrence fires again.
    expect(s.some((r) => live(r.status))).toBe(true);

    const o = await runsOf(once);
    const firstLive = o.findIndex((r) => live(r.status));
    expect(o.filter((r) => r.status === "SKIPPED")).toHaveLength(0);
    // One run stood in for the whole outage: the gap before the next run spans several seconds.
    expect(o[firstLive + 1]!.run_at.getTime() - o[firstLive]!.run_at.getTime()).toBeGreaterThanOrEqual(1000);
    expect(o.length).toBeLessThan((await runsOf(catchUp)).length);

    const c = await runsOf(catchUp);
    expect(c.every((r) => live(r.status))).toBe(true);
    for (let i = 1; i < c.length; i++) expect(c[i]!.run_at.getTime() - c[i - 1]!.run_at.getTime()).toBe(1000);
  }, 120_000);
});

describe("schedule lifecycle", () => {
  it("disabling stops new runs at once; update bumps the version; delete keeps past runs", async () => {
    const s = await define("lifecycle", "* * * * * *");
    const scheduler = startApp("scheduler", env());
    try {
      await waitFor("first runs", async () => (await runsOf(s)).length >= 2, 40_000);
      const { schedule: disabled } = await updateSchedule(tdb.db, tenantId, s.id, { enabled: false }, editor);
      expect(disabled.version).toBe(2);
      expect(disabled.nextRunAt).toBeNull();
      // ALLOW runs are materialised up to 2 s ahead; after that nothing new appears.
      await new Promise((r) => setTimeout(r, 2_500));
      const frozen = (await runsOf(s)).length;
      await new Promise((r) => setTimeout(r, 2_000));
      expect((await runsOf(s)).length).toBe(frozen);
      const { schedule: enabled } = await updateSchedule(tdb.db, tenantId, s.id, { enabled: true }, editor);
      expect(enabled.version).toBe(3);
      await waitFor("runs of version 3", async () => (await runsOf(s)).some((r) => r.run_at >= enabled.nextRunAt! && live(r.status)), 30_000);
    } finally {
      await scheduler.stop();
    }
    expect(await deleteSchedule(tdb.db, tenantId, s.id, editor)).toEqual({ dispatch: [], cancelledRunning: [] });
    const { value: runs } = await listScheduleRuns(tdb.db, tenantId, [s.id], 100);
    expect(runs.get(s.id)!.length).toBeGreaterThanOrEqual(3);
    // Newest scheduled time first.
    const times = runs.get(s.id)!.map((t) => t.runAt.getTime());
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    // The name is free again.
    await expect(define("lifecycle", "* * * * *")).resolves.toMatchObject({ name: "lifecycle", version: 1 });
  }, 120_000);
});

describe("a scheduler with nothing due", () => {
  it("sleeps, and a schedule written meanwhile wakes it in time for its first occurrence", async () => {
    // Nothing else is due: the scheduler's next look would be SCHEDULE_IDLE_MAX_MS (5 s) away.
    await tdb.db.pool.query("UPDATE schedules SET enabled = false, next_run_at = NULL");
    const scheduler = startApp("scheduler", env());
    try {
      await waitFor(
        "the schedule wake-up session",
        async () => (await tdb.db.pool.query("SELECT 1 FROM pg_stat_activity WHERE application_name = 'tasklane-schedule-wakeups' AND datname = current_database()")).rowCount === 1,
        30_000,
      );
      await new Promise((r) => setTimeout(r, 1_000));
      // SKIP overlap fires on the tick of its instant (no lookahead), and a second's misfire grace
      // would record an occurrence found 5 s late as SKIPPED: only a wake-up makes the first run on time.
      const s = await define("woken", "* * * * * *", { overlapPolicy: "SKIP" });
      await waitFor("the first run", async () => (await runsOf(s)).length > 0, 15_000);
      const res = await tdb.db.pool.query<{ status: string; late_ms: number }>(
        "SELECT status, EXTRACT(EPOCH FROM created_at - run_at)::float8 * 1000 AS late_ms FROM tasks WHERE schedule_id = $1 ORDER BY run_at LIMIT 1",
        [s.id],
      );
      expect(res.rows[0]?.status).toBe("QUEUED");
      expect(res.rows[0]?.late_ms).toBeLessThan(1_000);
    } finally {
      await scheduler.stop();
    }
  }, 60_000);
});
