import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF, IdPrefix, newId, type OverlapPolicy } from "@tasklane/core";
import { createSchedule, emptyTally, materialiseWindow } from "@tasklane/db";
import { seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

/**
 * A schedule's overlap policy looks at its unfinished runs when an occurrence
 * fires. Its finished runs stay for the retention period (a per-second
 * schedule keeps 86,400 a day): the look must read the runs that are
 * unfinished, not the schedule's history.
 */
let tdb: TestDatabase;
let tenantId: string;
let defaultQueueId: string;
const HISTORY = 3_000;
const template = { type: "tick", queue: "default", payload: null, priority: "NORMAL" as const, maxAttempts: 1, backoff: { ...DEFAULT_BACKOFF }, timeoutSeconds: 60 };

beforeAll(async () => {
  tdb = await createTestDatabase("overlaphistory");
  ({ tenantId, defaultQueueId } = await seedTenant(tdb.db));
});
afterAll(async () => tdb?.drop());

/** A per-minute schedule with `HISTORY` finished runs (and `unfinished` QUEUED ones), its next occurrence due a second ago. */
async function scheduleWithHistory(name: string, overlapPolicy: OverlapPolicy, unfinished: number) {
  const s = await createSchedule(tdb.db, tenantId, { name, cron: "* * * * *", timezone: "UTC", template, misfirePolicy: "FIRE_ONCE", overlapPolicy, enabled: true });
  const runs = (n: number) => Array.from({ length: n }, () => newId(IdPrefix.task));
  await tdb.db.pool.query(
    `INSERT INTO tasks (id, tenant_id, queue_id, type, status, run_at, created_at, completed_at, attempts, max_attempts,
                        backoff_strategy, backoff_delay_seconds, backoff_jitter, timeout_seconds, schedule_id)
     SELECT u.id, $2, $3, 'tick', CASE WHEN u.n > $5 THEN 'QUEUED' ELSE 'SUCCEEDED' END::"TaskStatus",
            now() - (u.n || ' minutes')::interval, now() - interval '3 days', CASE WHEN u.n > $5 THEN NULL ELSE now() END,
            1, 1, 'EXPONENTIAL', 1, true, 60, $4
       FROM unnest($1::text[]) WITH ORDINALITY AS u(id, n)`,
    [runs(HISTORY + unfinished), tenantId, defaultQueueId, s.id, HISTORY],
  );
  await tdb.db.pool.query("ANALYZE tasks");
  return { ...s, nextRunAt: new Date(Math.floor(Date.now() / 60_000) * 60_000) };
}

/** Fires the schedule's due occurrence in a transaction that is rolled back; answers the rows read from tasks. */
async function rowsReadFiring(s: Awaited<ReturnType<typeof scheduleWithHistory>>): Promise<{ read: number; statuses: Record<string, number> }> {
  const client = await tdb.db.pool.connect();
  const readSoFar = async () => {
    const res = await client.query<{ n: string }>(
      "SELECT (coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0))::text AS n FROM pg_stat_xact_user_tables WHERE relname = 'tasks'",
    );
    return Number(res.rows[0]?.n ?? 0);
  };
  try {
    await client.query("BEGIN");
    const before = await readSoFar();
    const now = new Date();
    await materialiseWindow(client, s, now, now, { horizonMs: 60_000 }, emptyTally());
    const read = (await readSoFar()) - before;
    const res = await client.query<{ status: string; n: number }>("SELECT status, count(*)::int AS n FROM tasks WHERE schedule_id = $1 GROUP BY status", [s.id]);
    return { read, statuses: Object.fromEntries(res.rows.map((r) => [r.status, r.n])) };
  } finally {
    await client.query("ROLLBACK");
    client.release();
  }
}

describe("an overlap policy's look at the previous runs", () => {
  it("SKIP reads the schedule's unfinished runs, not its finished history", async () => {
    const idle = await scheduleWithHistory("skip-idle", "SKIP", 0);
    const fired = await rowsReadFiring(idle);
    // Nothing unfinished: the occurrence runs. Through (schedule_id, run_at DESC) the look read all 3,000 finished runs.
    expect(fired.statuses).toEqual({ SUCCEEDED: HISTORY, QUEUED: 1 });
    expect(fired.read).toBeLessThan(100);

    const busy = await scheduleWithHistory("skip-busy", "SKIP", 1);
    const skipped = await rowsReadFiring(busy);
    expect(skipped.statuses).toEqual({ SUCCEEDED: HISTORY, QUEUED: 1, SKIPPED: 1 });
    expect(skipped.read).toBeLessThan(100);
  });

  it("CANCEL_RUNNING reads the schedule's unfinished runs, not its finished history", async () => {
    const s = await scheduleWithHistory("cancel", "CANCEL_RUNNING", 2);
    const fired = await rowsReadFiring(s);
    // The two unfinished runs are cancelled and the occurrence runs; the history is left as it was.
    expect(fired.statuses).toEqual({ SUCCEEDED: HISTORY, CANCELLED: 2, QUEUED: 1 });
    expect(fired.read).toBeLessThan(100);
  });
});
