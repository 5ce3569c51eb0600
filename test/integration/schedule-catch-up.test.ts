import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF, MAX_CATCH_UP_RUNS, MISFIRE_WINDOW } from "@tasklane/core";
import { createSchedule, fireDueSchedules, type ScheduleRecord } from "@tasklane/db";
import { seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

/**
 * Missed cron occurrences after an outage, driven by setting next_run_at in
 * the past and calling the firing function directly: each occurrence is
 * accounted for once, as its misfire policy says, however many passes it
 * takes: fired, recorded SKIPPED, or (a long backlog's older ones) stood for
 * by a SKIPPED run whose lastError counts them.
 */
let tdb: TestDatabase;
let tenantId: string;
const template = { type: "tick", queue: "default", payload: null, priority: "NORMAL" as const, maxAttempts: 1, backoff: { ...DEFAULT_BACKOFF }, timeoutSeconds: 60 };
const GRACE_MS = 1_000;

const dbNow = async () => (await tdb.db.pool.query<{ now: Date }>("SELECT now()")).rows[0]!.now;

async function runsOf(s: ScheduleRecord) {
  const res = await tdb.db.pool.query(`SELECT status, run_at, last_error FROM tasks WHERE schedule_id = $1 ORDER BY run_at`, [s.id]);
  return res.rows as { status: string; run_at: Date; last_error: string | null }[];
}

const SUMMARY = /^missed, with the ([\d,]+) missed occurrences before it since (\S+), which are not recorded one by one$/;

/** The occurrences the runs account for, oldest first: each run's own, and before a summary run those it stands for (one second apart). */
function accountedFor(runs: { run_at: Date; last_error: string | null }[]): number[] {
  return runs.flatMap((r) => {
    const m = r.last_error?.match(SUMMARY);
    const earlier = m ? Number(m[1]!.replace(/,/g, "")) : 0;
    if (m) expect(Date.parse(m[2]!)).toBe(r.run_at.getTime() - earlier * 1000);
    return Array.from({ length: earlier + 1 }, (_, i) => r.run_at.getTime() - (earlier - i) * 1000);
  });
}

/**
 * Puts the schedule's next run `interval` before the current second, answering that instant and the
 * statement's clock: read in a later statement, the clock could be a second on (the boundary passed
 * between the two), and the first occurrence looked a second off.
 */
async function putBack(s: ScheduleRecord, interval: string): Promise<{ first: Date; start: Date }> {
  const res = await tdb.db.pool.query<{ first: Date; start: Date }>(
    `UPDATE schedules SET next_run_at = date_trunc('second', now()) - $2::interval WHERE id = $1 RETURNING next_run_at AS first, now() AS start`,
    [s.id, interval],
  );
  return res.rows[0]!;
}

/** The scheduler's passes, one after another, until the schedule's next occurrence is ahead. */
async function fireUntilCaughtUp(s: ScheduleRecord, passes = 20): Promise<void> {
  for (let pass = 0; pass < passes; pass++) {
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
  it("fires at most MAX_CATCH_UP_RUNS missed occurrences for the whole recovery, the newest, and accounts for the older rest SKIPPED", async () => {
    const s = await createSchedule(tdb.db, tenantId, { name: "per-second", cron: "* * * * * *", timezone: "UTC", template, misfirePolicy: "CATCH_UP", overlapPolicy: "ALLOW", enabled: true });
    // The scheduler was away for 50 minutes: 3,000 occurrences missed, more than fit one window.
    const { first, start } = await putBack(s, "3000 seconds");
    await fireUntilCaughtUp(s);
    const end = await dbNow();

    const runs = await runsOf(s);
    // Every occurrence accounted for exactly once, one second apart, from the first missed one on.
    const occurrences = accountedFor(runs);
    expect(occurrences[0]).toBe(first.getTime());
    for (let i = 1; i < occurrences.length; i++) expect(occurrences[i]! - occurrences[i - 1]!).toBe(1000);
    const skipped = runs.filter((r) => r.status === "SKIPPED");
    const fired = runs.filter((r) => r.status !== "SKIPPED");
    // The skipped ones are the oldest, the fired ones the newest.
    expect(runs.slice(0, skipped.length).every((r) => r.status === "SKIPPED")).toBe(true);
    // The cap, plus the occurrences that were still on time (or fell due) while the passes ran.
    const onTimeAtMost = Math.ceil((end.getTime() - start.getTime() + GRACE_MS) / 1000) + 1;
    expect(fired.length).toBeGreaterThanOrEqual(MAX_CATCH_UP_RUNS);
    expect(fired.length).toBeLessThanOrEqual(MAX_CATCH_UP_RUNS + onTimeAtMost);
    expect(occurrences.length - fired.length).toBeGreaterThanOrEqual(3000 - MAX_CATCH_UP_RUNS - onTimeAtMost);
  }, 120_000);
});

describe("SKIP after a day's outage", () => {
  it("records the newest missed occurrences one by one and one SKIPPED run for each older thousand, saying how many it stands for", async () => {
    const s = await createSchedule(tdb.db, tenantId, { name: "per-second-skip", cron: "* * * * * *", timezone: "UTC", template, misfirePolicy: "SKIP", overlapPolicy: "ALLOW", enabled: true });
    const { first } = await putBack(s, "1 day");
    await fireUntilCaughtUp(s, 200);

    const runs = await runsOf(s);
    const occurrences = accountedFor(runs);
    expect(occurrences[0]).toBe(first.getTime());
    for (let i = 1; i < occurrences.length; i++) expect(occurrences[i]! - occurrences[i - 1]!).toBe(1000);
    // 86,400 missed: recorded one by one they were 86,400 SKIPPED runs (and as many events).
    expect(runs.filter((r) => r.status === "SKIPPED").length).toBeLessThanOrEqual(MISFIRE_WINDOW + 87);
    expect(runs.filter((r) => r.last_error?.match(SUMMARY)).length).toBeGreaterThanOrEqual(80);
  }, 120_000);
});
