import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF } from "@tasklane/core";
import { createSchedule, fireDueSchedules } from "@tasklane/db";
import { seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

/**
 * Daylight-saving changes as the scheduler materialises them (README,
 * Schedules), without a fake clock: a schedule whose next_run_at is put back
 * before 2026's changes in America/New_York is caught up to now, every
 * occurrence on time (a grace longer than the backlog), so its runs are the
 * occurrences themselves.
 */
let tdb: TestDatabase;
let tenantId: string;
const template = { type: "tick", queue: "default", payload: null, priority: "NORMAL" as const, maxAttempts: 1, backoff: { ...DEFAULT_BACKOFF }, timeoutSeconds: 60 };
const YEAR_MS = 366 * 86_400_000;

beforeAll(async () => {
  tdb = await createTestDatabase("scheddst");
  ({ tenantId } = await seedTenant(tdb.db));
});
afterAll(async () => tdb?.drop());

async function runInstantsBetween(cron: string, from: string, to: string): Promise<string[]> {
  const s = await createSchedule(tdb.db, tenantId, { name: cron, cron, timezone: "America/New_York", template, misfirePolicy: "CATCH_UP", overlapPolicy: "ALLOW", enabled: true });
  await tdb.db.pool.query(`UPDATE schedules SET next_run_at = $2 WHERE id = $1`, [s.id, new Date(from)]);
  for (let pass = 0; pass < 50; pass++) {
    const behind = await tdb.db.pool.query(`SELECT 1 FROM schedules WHERE id = $1 AND next_run_at <= now()`, [s.id]);
    if (!behind.rowCount) break;
    await fireDueSchedules(tdb.db, { lookaheadMs: 0, horizonMs: 60_000, limit: 100, graceMs: 100 * YEAR_MS });
  }
  const res = await tdb.db.pool.query<{ run_at: Date }>(`SELECT run_at FROM tasks WHERE schedule_id = $1 AND run_at >= $2 AND run_at < $3 ORDER BY run_at`, [
    s.id,
    new Date(from),
    new Date(to),
  ]);
  return res.rows.map((r) => r.run_at.toISOString());
}

describe("cron runs across daylight-saving changes (America/New_York, 2026)", () => {
  it("spring forward: 02:30, which does not exist on March 8, runs once at 03:00 EDT", async () => {
    const runs = await runInstantsBetween("30 2 * * *", "2026-03-07T07:30:00.000Z", "2026-03-10T00:00:00.000Z");
    expect(runs).toEqual(["2026-03-07T07:30:00.000Z", "2026-03-08T07:00:00.000Z", "2026-03-09T06:30:00.000Z"]);
  });

  it("fall back: 01:30, which happens twice on November 1, runs once, at 01:30 EDT", async () => {
    const runs = await runInstantsBetween("30 1 * * *", "2026-10-31T05:30:00.000Z", "2026-11-03T00:00:00.000Z");
    expect(runs).toEqual(["2026-10-31T05:30:00.000Z", "2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"]);
  });

  it("an every-hour expression follows elapsed time: both passes of the repeated hour run", async () => {
    const runs = await runInstantsBetween("30 * * * *", "2026-11-01T04:30:00.000Z", "2026-11-01T08:00:00.000Z");
    // 00:30 EDT, 01:30 EDT, 01:30 EST, 02:30 EST
    expect(runs).toEqual(["2026-11-01T04:30:00.000Z", "2026-11-01T05:30:00.000Z", "2026-11-01T06:30:00.000Z", "2026-11-01T07:30:00.000Z"]);
  });
});
