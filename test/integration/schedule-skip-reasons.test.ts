import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF, OVERLAP_SKIP_REASON, missedReason, type MisfirePolicy, type OverlapPolicy } from "@tasklane/core";
import { createSchedule, fireDueSchedules, updateSchedule, type ScheduleRecord } from "@tasklane/db";
import { seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

/**
 * A run recorded SKIPPED says why, in lastError and its event's reason, as a
 * quota's SKIPPED runs always did: a missed occurrence and one the overlap
 * policy skipped looked alike (and like one a change skipped).
 */
let tdb: TestDatabase;
let tenantId: string;
const template = { type: "tick", queue: "default", payload: null, priority: "NORMAL" as const, maxAttempts: 1, backoff: { ...DEFAULT_BACKOFF }, timeoutSeconds: 60 };

/** A per-second schedule the scheduler has not reached for `seconds`. */
async function behind(name: string, seconds: number, misfirePolicy: MisfirePolicy, overlapPolicy: OverlapPolicy): Promise<ScheduleRecord> {
  const s = await createSchedule(tdb.db, tenantId, { name, cron: "* * * * * *", timezone: "UTC", template, misfirePolicy, overlapPolicy, enabled: true });
  await tdb.db.pool.query(`UPDATE schedules SET next_run_at = date_trunc('second', now()) - $2 * interval '1 second' WHERE id = $1`, [s.id, seconds]);
  return s;
}

async function runsOf(s: ScheduleRecord) {
  const res = await tdb.db.pool.query(
    `SELECT t.status, t.last_error, (SELECT e.reason FROM task_events e WHERE e.task_id = t.id ORDER BY e.id LIMIT 1) AS reason
     FROM tasks t WHERE t.schedule_id = $1 ORDER BY t.run_at`,
    [s.id],
  );
  return res.rows as { status: string; last_error: string | null; reason: string | null }[];
}

beforeAll(async () => {
  tdb = await createTestDatabase("schedskipreasons");
  ({ tenantId } = await seedTenant(tdb.db));
});
afterAll(async () => tdb?.drop());

describe("a SKIPPED run's reason", () => {
  it("names the misfire policy for a missed occurrence and the overlap policy for one skipped behind an unfinished run", async () => {
    const missed = await behind("missed", 20, "SKIP", "ALLOW");
    const overlapped = await behind("overlapped", 4, "SKIP", "SKIP");
    // 10 s of grace: the missed schedule's occurrences over 10 s old are missed, the newer ones on time;
    // the overlapped one's oldest (4-5 s old when set) stays on time through a stall of 5 s before the
    // firing (with 5 s of grace, one that crossed a second boundary made it missed, and the test failed).
    await fireDueSchedules(tdb.db, { lookaheadMs: 0, horizonMs: 60_000, limit: 100, graceMs: 10_000 });

    const m = await runsOf(missed);
    const skipped = m.filter((r) => r.status === "SKIPPED");
    expect(skipped.length).toBeGreaterThanOrEqual(4);
    expect(m.filter((r) => r.status !== "SKIPPED").every((r) => r.last_error === null)).toBe(true);
    expect(skipped.map((r) => [r.last_error, r.reason])).toEqual(skipped.map(() => [missedReason("SKIP"), missedReason("SKIP")]));

    // The first run never finishes (no consumer): the ones after it are SKIPPED by the overlap policy.
    const o = await runsOf(overlapped);
    expect(o[0]).toMatchObject({ status: "QUEUED", last_error: null });
    expect(o.length).toBeGreaterThanOrEqual(5);
    expect(o.slice(1).map((r) => [r.status, r.last_error, r.reason])).toEqual(o.slice(1).map(() => ["SKIPPED", OVERLAP_SKIP_REASON, OVERLAP_SKIP_REASON]));
  });

  it("names the change for a run materialised ahead that a change skipped", async () => {
    const ahead = await behind("ahead", 0, "SKIP", "ALLOW");
    // 5 s ahead: two or more runs are still ahead when the change comes, through a stall of 3 s (with 3 s, 1 s did it).
    await fireDueSchedules(tdb.db, { lookaheadMs: 5_000, horizonMs: 60_000, limit: 100 });
    await updateSchedule(tdb.db, tenantId, ahead.id, { enabled: false }, { actor: "test", horizonMs: 60_000 });
    const skipped = (await runsOf(ahead)).filter((r) => r.status === "SKIPPED");
    expect(skipped.length).toBeGreaterThanOrEqual(2);
    // The event's reason is the first event's (the run was inserted SCHEDULED): lastError says it now.
    expect(skipped.map((r) => r.last_error)).toEqual(skipped.map(() => "schedule disabled"));
  });
});
