import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF } from "@tasklane/core";
import { createSchedule, fireDueSchedules, getSchedule, updateSchedule } from "@tasklane/db";
import { seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

/**
 * A stored schedule this version cannot read (a zone the runtime's tz data no
 * longer has, a cron expression a stricter parser refuses, a row from an older
 * version) must not stop the other schedules of its batch, every pass.
 */
let tdb: TestDatabase;
const template = { type: "tick", queue: "default", payload: null, priority: "NORMAL" as const, maxAttempts: 1, backoff: { ...DEFAULT_BACKOFF }, timeoutSeconds: 60 };
const fire = () => fireDueSchedules(tdb.db, { lookaheadMs: 0, horizonMs: 60_000, limit: 100 });

beforeAll(async () => {
  tdb = await createTestDatabase("schedunreadable");
});
afterAll(async () => tdb?.drop());

async function minutely(tenantId: string, name: string) {
  return createSchedule(tdb.db, tenantId, { name, cron: "* * * * *", timezone: "UTC", template, misfirePolicy: "SKIP", overlapPolicy: "SKIP", enabled: true });
}

const runsOf = async (scheduleId: string) => Number((await tdb.db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM tasks WHERE schedule_id = $1`, [scheduleId])).rows[0]!.n);

describe("a schedule whose cron or zone cannot be read", () => {
  it("is set aside (no next run, still enabled) while the rest of the batch fires; an update with valid ones brings it back", async () => {
    const owner = (await seedTenant(tdb.db)).tenantId;
    const other = (await seedTenant(tdb.db)).tenantId;
    const badZone = await minutely(owner, "bad-zone");
    const badCron = await minutely(owner, "bad-cron");
    const fine = await minutely(other, "fine");
    // Written by an older version, as if: the zone and the expression are refused today. Both due.
    await tdb.db.pool.query(`UPDATE schedules SET timezone = 'Asia/Nowhere', next_run_at = date_trunc('minute', now()) WHERE id = $1`, [badZone.id]);
    await tdb.db.pool.query(`UPDATE schedules SET cron = '0 0 30 2 *', next_run_at = date_trunc('minute', now()) WHERE id = $1`, [badCron.id]);
    await tdb.db.pool.query(`UPDATE schedules SET next_run_at = date_trunc('minute', now()) WHERE id = $1`, [fine.id]);

    const result = await fire();
    expect(result.schedules).toBe(3);
    expect(await runsOf(fine.id)).toBe(1);
    expect(result.unreadable.map((u) => u.id).sort()).toEqual([badZone.id, badCron.id].sort());
    expect(result.unreadable.find((u) => u.id === badZone.id)).toMatchObject({ tenantId: owner, problem: expect.stringContaining("IANA") });
    for (const s of [badZone, badCron]) {
      expect(await runsOf(s.id)).toBe(0);
      expect(await getSchedule(tdb.db, owner, s.id)).toMatchObject({ enabled: true, nextRunAt: null });
    }
    // Set aside, they are no longer due: the next pass has nothing to do with them.
    expect((await fire()).unreadable).toEqual([]);

    const editor = { actor: "test", horizonMs: 60_000 };
    const { schedule } = await updateSchedule(tdb.db, owner, badZone.id, { timezone: "Europe/Berlin" }, editor);
    expect(schedule).toMatchObject({ timezone: "Europe/Berlin", enabled: true });
    expect(schedule.nextRunAt).not.toBeNull();
  });
});
