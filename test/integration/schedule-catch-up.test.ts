import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF, MAX_CATCH_UP_RUNS } from "@tasklane/core";
import { createSchedule, fireDueSchedules, type ScheduleRecord } from "@tasklane/db";
import { seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

/**
 * Missed cron occurrences after an outage, driven by setting next_run_at in
 * the past and calling the firing function directly: each occurrence is
 * recorded once, as its misfire policy says, however many passes it takes.
 */
let tdb: TestDatabase;
let tenantId: string;
const template = { type: "tick", queue: "default", payload: null, priority: "NORMAL" as const, maxAttempts: 1, backoff: { ...DEFAULT_BACKOFF }, timeoutSeconds: 60 };
const GRACE_MS = 1_000;

const dbNow = async () => (await tdb.db.pool.query<{ now: Date }>("SELECT now()")).rows[0]!.now;

async function runsOf(s: ScheduleRecord) {
  const res = await tdb.db.pool.query(`SELECT status, run_at FROM tasks WHERE schedule_id = $1 ORDER BY run_at`, [s.id]);
  return res.rows as { status: string; run_at: Date }[];
}

/** The scheduler's passes, one after another, until the schedule's next occurrence is ahead. */
async function fireUntilCaughtUp(s: ScheduleRecord): Promise<void> {
  for (let pass = 0; pass < 20; pass++) {
    await fireDueSchedules(tdb.db, { lookaheadMs: 0, horizonMs: 60_000, limit: 100, graceMs: GRACE_MS });
    const behind = await tdb.db.pool.query(`SELECT 1 FROM schedules WHERE id = $1 AND next_run_at <= now() - interval '1 second'`, [s.id]);
    if (!behind.rowCount) return;
  }
  throw new Error("the schedule never caught up");
}

beforeAll(async () => {
  tdb = await createTestDatabase("schedcatch");
  ({ tenantId } = await seedTenant(tdb.db));
});
afterAll(async () => tdb?.drop());

describe("CATCH_UP after a long outage", () => {
  it("fires at most MAX_CATCH_UP_RUNS missed occurrences for the whole recovery, the newest, and records the older rest SKIPPED", async () => {
    const s = await createSchedule(tdb.db, tenantId, { name: "per-second", cron: "* * * * * *", timezone: "UTC", template, misfirePolicy: "CATCH_UP", overlapPolicy: "ALLOW", enabled: true });
    // The scheduler was away for 50 minutes: 3,000 occurrences missed, more than fit one window.
    await tdb.db.pool.query(`UPDATE schedules SET next_run_at = date_trunc('second', now()) - interval '3000 seconds' WHERE id = $1`, [s.id]);
    const start = await dbNow();
    await fireUntilCaughtUp(s);
    const end = await dbNow();

    const runs = await runsOf(s);
    // Every occurrence recorded exactly once, one second apart, from the first missed one on.
    expect(runs[0]!.run_at.getTime()).toBe(Math.floor(start.getTime() / 1000) * 1000 - 3_000_000);
    for (let i = 1; i < runs.length; i++) expect(runs[i]!.run_at.getTime() - runs[i - 1]!.run_at.getTime()).toBe(1000);
    const skipped = runs.filter((r) => r.status === "SKIPPED");
    const fired = runs.filter((r) => r.status !== "SKIPPED");
    // The skipped ones are the oldest, the fired ones the newest.
    expect(runs.slice(0, skipped.length).every((r) => r.status === "SKIPPED")).toBe(true);
    // The cap, plus the occurrences that were still on time (or fell due) while the passes ran.
    const onTimeAtMost = Math.ceil((end.getTime() - start.getTime() + GRACE_MS) / 1000) + 1;
    expect(fired.length).toBeGreaterThanOrEqual(MAX_CATCH_UP_RUNS);
    expect(fired.length).toBeLessThanOrEqual(MAX_CATCH_UP_RUNS + onTimeAtMost);
    expect(skipped.length).toBeGreaterThanOrEqual(3000 - MAX_CATCH_UP_RUNS - onTimeAtMost);
  }, 120_000);
});
