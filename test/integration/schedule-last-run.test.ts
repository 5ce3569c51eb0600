import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF, type OverlapPolicy } from "@tasklane/core";
import { createSchedule, fireDueSchedules, getSchedule, updateSchedule, type ScheduleRecord } from "@tasklane/db";
import { seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

/**
 * Schedule.lastRunAt is the latest occurrence that ran: an occurrence recorded
 * SKIPPED (by the overlap policy, or past a quota) did not run. It used to be
 * the latest occurrence fired, skipped or not, so a schedule over its tenant's
 * daily quota showed a new lastRunAt every occurrence, and an ALLOW one
 * flipped back to its last real run whenever the next was materialised ahead.
 * Runs materialised ahead and SKIPPED by a change did not run either.
 */
let tdb: TestDatabase;
const template = { type: "tick", queue: "default", payload: null, priority: "NORMAL" as const, maxAttempts: 1, backoff: { ...DEFAULT_BACKOFF }, timeoutSeconds: 60 };
// Nothing ahead, and every occurrence on time: only what is due is materialised, none of it a misfire.
const fire = () => fireDueSchedules(tdb.db, { lookaheadMs: 0, horizonMs: 60_000, limit: 100, graceMs: 60_000 });

/** A per-second schedule the scheduler has not reached for four seconds: five (or six, a second later) occurrences due at once. */
async function behind(tenantId: string, name: string, overlapPolicy: OverlapPolicy): Promise<ScheduleRecord> {
  const s = await createSchedule(tdb.db, tenantId, { name, cron: "* * * * * *", timezone: "UTC", template, misfirePolicy: "SKIP", overlapPolicy, enabled: true });
  await tdb.db.pool.query(`UPDATE schedules SET next_run_at = date_trunc('second', now()) - interval '4 seconds' WHERE id = $1`, [s.id]);
  return s;
}

async function runsOf(s: ScheduleRecord) {
  const res = await tdb.db.pool.query(`SELECT status, run_at FROM tasks WHERE schedule_id = $1 ORDER BY run_at`, [s.id]);
  return res.rows as { status: string; run_at: Date }[];
}

beforeAll(async () => {
  tdb = await createTestDatabase("schedlastrun");
});
afterAll(async () => tdb?.drop());

describe("Schedule.lastRunAt", () => {
  it("is the latest occurrence that ran, not one SKIPPED by the overlap policy or the daily quota", async () => {
    const { tenantId } = await seedTenant(tdb.db);
    const overlap = await behind(tenantId, "overlap-skip", "SKIP");
    const quota = await seedTenant(tdb.db);
    await tdb.db.pool.query(`UPDATE tenants SET daily_task_quota = 2 WHERE id = $1`, [quota.tenantId]);
    const overQuota = await behind(quota.tenantId, "over-quota", "ALLOW");
    await fire();

    // The first run never finishes (no consumer): the four after it are SKIPPED by the overlap policy.
    const o = await runsOf(overlap);
    expect(o.length).toBeGreaterThanOrEqual(5);
    expect(o.map((r) => r.status)).toEqual(["QUEUED", ...o.slice(1).map(() => "SKIPPED")]);
    expect((await getSchedule(tdb.db, tenantId, overlap.id))?.lastRunAt).toEqual(o[0]!.run_at);

    // Two runs within the quota, three past it.
    const q = await runsOf(overQuota);
    expect(q.length).toBeGreaterThanOrEqual(5);
    expect(q.map((r) => r.status)).toEqual(["QUEUED", "QUEUED", ...q.slice(2).map(() => "SKIPPED")]);
    expect((await getSchedule(tdb.db, quota.tenantId, overQuota.id))?.lastRunAt).toEqual(q[1]!.run_at);
  });

  it("goes back to the latest run left when a change SKIPs the runs materialised ahead", async () => {
    const { tenantId } = await seedTenant(tdb.db);
    const s = await behind(tenantId, "ahead", "ALLOW");
    // Materialised up to 5 s ahead, as the scheduler does ALLOW runs (2 s there): two or more are still
    // ahead when the change comes through a 3 s stall (3 s ahead: a 1 s stall left one).
    await fireDueSchedules(tdb.db, { lookaheadMs: 5_000, horizonMs: 60_000, limit: 100, graceMs: 60_000 });
    expect((await runsOf(s)).some((r) => r.status === "SCHEDULED")).toBe(true);
    await updateSchedule(tdb.db, tenantId, s.id, { enabled: false }, { actor: "test", horizonMs: 60_000 });
    const runs = await runsOf(s);
    const ran = runs.filter((r) => r.status !== "SKIPPED");
    const skipped = runs.filter((r) => r.status === "SKIPPED");
    expect(skipped.length).toBeGreaterThanOrEqual(2);
    // Once the skipped runs' instants have passed (by the database's clock), lastRunAt is still the latest that ran.
    const lastSkipped = skipped.at(-1)!.run_at;
    const wait = await tdb.db.pool.query<{ ms: number }>("SELECT extract(epoch FROM ($1::timestamptz - now()))::float8 * 1000 AS ms", [lastSkipped]);
    await new Promise((r) => setTimeout(r, Math.max(0, wait.rows[0]!.ms) + 200));
    expect((await getSchedule(tdb.db, tenantId, s.id))?.lastRunAt).toEqual(ran.at(-1)!.run_at);
  });
});
