import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF } from "@tasklane/core";
import { createSchedule, fireDueSchedules, getSchedule, listSchedules, updateSchedule } from "@tasklane/db";
import { seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

/**
 * nextRunAt and lastRunAt as the API (and the console) read them, for an
 * ALLOW schedule whose runs are materialised ahead of their instants.
 */
let tdb: TestDatabase;
let tenantId: string;
const template = { type: "tick", queue: "default", payload: null, priority: "NORMAL" as const, maxAttempts: 1, backoff: { ...DEFAULT_BACKOFF }, timeoutSeconds: 60 };

beforeAll(async () => {
  tdb = await createTestDatabase("schedread");
  ({ tenantId } = await seedTenant(tdb.db));
});
afterAll(async () => tdb?.drop());

describe("a schedule's nextRunAt and lastRunAt", () => {
  it("are the earliest occurrence not started and the latest fired one whose instant has passed, not where materialising ahead got to", async () => {
    const s = await createSchedule(tdb.db, tenantId, { name: "half-hourly", cron: "*/30 * * * *", timezone: "UTC", template, misfirePolicy: "SKIP", overlapPolicy: "ALLOW", enabled: true });
    // Materialised an hour ahead: the stored next_run_at and last_run_at move past both runs.
    await fireDueSchedules(tdb.db, { lookaheadMs: 3_600_000, horizonMs: 60_000, limit: 100 });
    const runs = (await tdb.db.pool.query(`SELECT id, run_at FROM tasks WHERE schedule_id = $1 ORDER BY run_at`, [s.id])).rows as { id: string; run_at: Date }[];
    expect(runs).toHaveLength(2);
    const [first, second] = runs as [{ id: string; run_at: Date }, { id: string; run_at: Date }];
    const read = async () => {
      const one = await getSchedule(tdb.db, tenantId, s.id);
      const listed = (await listSchedules(tdb.db, tenantId)).find((x) => x.id === s.id);
      expect(listed).toMatchObject({ nextRunAt: one!.nextRunAt, lastRunAt: one!.lastRunAt });
      return { nextRunAt: one!.nextRunAt, lastRunAt: one!.lastRunAt };
    };
    expect(await read()).toEqual({ nextRunAt: first.run_at, lastRunAt: null });

    // A worker started the first run ahead of its instant: the next not started is the second.
    await tdb.db.pool.query(`UPDATE tasks SET status = 'RUNNING', started_at = now(), attempts = 1 WHERE id = $1`, [first.id]);
    expect(await read()).toEqual({ nextRunAt: second.run_at, lastRunAt: null });

    // Its instant passed (the occurrence key holds the instant, as materialising wrote it).
    const passed = (
      await tdb.db.pool.query<{ run_at: Date }>(
        `UPDATE tasks SET run_at = date_trunc('milliseconds', now() - interval '1 second'),
           occurrence_key = schedule_id || ':' || to_char(date_trunc('milliseconds', now() - interval '1 second') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
         WHERE id = $1 RETURNING run_at`,
        [first.id],
      )
    ).rows[0]!.run_at;
    expect(await read()).toEqual({ nextRunAt: second.run_at, lastRunAt: passed });

    // It failed and waits for its retry: lastRunAt is still its occurrence, not the retry's time.
    await tdb.db.pool.query(`UPDATE tasks SET status = 'RETRYING', run_at = now() + interval '40 minutes' WHERE id = $1`, [first.id]);
    expect(await read()).toEqual({ nextRunAt: second.run_at, lastRunAt: passed });
    await tdb.db.pool.query(`UPDATE tasks SET status = 'RUNNING', run_at = now() - interval '10 milliseconds' WHERE id = $1`, [first.id]);

    // A change skips the second (materialised ahead): next is the new version's first occurrence with no run.
    // The first run stands for an instant a second ago here, so its original instant has none: that one.
    const { schedule } = await updateSchedule(tdb.db, tenantId, s.id, { template: { ...template, type: "tock" } }, { actor: "test", horizonMs: 60_000 });
    expect({ nextRunAt: schedule.nextRunAt, lastRunAt: schedule.lastRunAt }).toEqual({ nextRunAt: first.run_at, lastRunAt: passed });
    expect(await read()).toEqual({ nextRunAt: first.run_at, lastRunAt: passed });
  });
});
