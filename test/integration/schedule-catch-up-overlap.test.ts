import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF, type OverlapPolicy } from "@tasklane/core";
import { createSchedule, fireDueSchedules } from "@tasklane/db";
import { countingDatabase } from "../helpers/counting-database.js";
import { seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

/**
 * A CATCH_UP recovery of an overlap-checked schedule: hundreds of missed
 * occurrences fire in one batch transaction, which holds every other schedule
 * of the batch until it commits. The runs must be what deciding occurrence by
 * occurrence gives, in a bounded number of statements, not a few per occurrence.
 */
let tdb: TestDatabase;
let tenantId: string;
const template = { type: "tick", queue: "default", payload: null, priority: "NORMAL" as const, maxAttempts: 1, backoff: { ...DEFAULT_BACKOFF }, timeoutSeconds: 60 };
const MISSED_SECONDS = 600;

beforeAll(async () => {
  tdb = await createTestDatabase("catchupoverlap");
  ({ tenantId } = await seedTenant(tdb.db));
});
afterAll(async () => tdb?.drop());

async function perSecond(name: string, overlapPolicy: OverlapPolicy, downSince: Date) {
  const s = await createSchedule(tdb.db, tenantId, { name, cron: "* * * * * *", timezone: "UTC", template, misfirePolicy: "CATCH_UP", overlapPolicy, enabled: true });
  await tdb.db.pool.query(`UPDATE schedules SET next_run_at = $2 WHERE id = $1`, [s.id, downSince]);
  return s.id;
}

/** Down for ten minutes: every second since is missed (the grace is 30 s), and CATCH_UP fires each.
 *  One instant for all three schedules, so a second ticking over between their updates cannot give them different counts. */
async function downSince(): Promise<Date> {
  const res = await tdb.db.pool.query<{ at: Date }>(`SELECT date_trunc('second', now()) - $1 * interval '1 second' AS at`, [MISSED_SECONDS]);
  return res.rows[0]!.at;
}

async function runsOf(scheduleId: string) {
  const res = await tdb.db.pool.query<{ id: string; status: string; run_at: Date }>(`SELECT id, status, run_at FROM tasks WHERE schedule_id = $1 ORDER BY run_at`, [scheduleId]);
  return res.rows;
}

describe("CATCH_UP with an overlap policy that looks at the previous run", () => {
  it("fires hundreds of missed occurrences in a few statements, with the runs deciding one by one gave", async () => {
    const since = await downSince();
    const queue = await perSecond("queue", "QUEUE", since);
    const skip = await perSecond("skip", "SKIP", since);
    const cancel = await perSecond("cancel", "CANCEL_RUNNING", since);

    const counting = countingDatabase(tdb.url);
    try {
      const result = await fireDueSchedules(counting.db, { lookaheadMs: 0, horizonMs: 60_000, limit: 100 });
      expect(result.schedules).toBe(3);
      // A few statements per schedule and window; one by one it took several per occurrence (thousands).
      expect(counting.statements()).toBeLessThan(100);
    } finally {
      await counting.db.close();
    }

    const q = await runsOf(queue);
    const s = await runsOf(skip);
    const c = await runsOf(cancel);
    // Every missed second once, and the same seconds for each schedule.
    expect(q.length).toBeGreaterThan(MISSED_SECONDS);
    for (const runs of [s, c]) expect(runs.map((r) => r.run_at.getTime())).toEqual(q.map((r) => r.run_at.getTime()));
    for (let i = 1; i < q.length; i++) expect(q[i]!.run_at.getTime() - q[i - 1]!.run_at.getTime()).toBe(1000);

    // QUEUE: every run waits its turn, in occurrence order (the ordering key serialises by id).
    expect(q.every((r) => r.status === "QUEUED")).toBe(true);
    expect([...q].sort((a, b) => (a.id < b.id ? -1 : 1)).map((r) => r.id)).toEqual(q.map((r) => r.id));
    // SKIP: the oldest runs, every later one meets it unfinished.
    expect(s[0]!.status).toBe("QUEUED");
    expect(s.slice(1).every((r) => r.status === "SKIPPED")).toBe(true);
    // CANCEL_RUNNING: each cancels the one before it; the newest runs.
    expect(c.at(-1)!.status).toBe("QUEUED");
    expect(c.slice(0, -1).every((r) => r.status === "CANCELLED")).toBe(true);
  }, 120_000);
});
