import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF, UserError, type OverlapPolicy } from "@tasklane/core";
import { createSchedule, fireDueSchedules, submitTasks, type ScheduleRecord } from "@tasklane/db";
import { seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

/**
 * Cron runs count toward the tenant's dailyTaskQuota and maxPendingTasks like
 * submissions: an occurrence past either is not run but recorded SKIPPED, its
 * lastError (and its event's reason) naming the quota, notified like any
 * skipped run; the scheduler's batch goes on for every other tenant, and the
 * schedule's next occurrence is tried again as usual.
 */
let tdb: TestDatabase;
const template = { type: "tick", queue: "default", payload: null, priority: "NORMAL" as const, maxAttempts: 1, backoff: { ...DEFAULT_BACKOFF }, timeoutSeconds: 60 };
// Nothing ahead: only the occurrences already due are materialised.
const fire = () => fireDueSchedules(tdb.db, { lookaheadMs: 0, horizonMs: 60_000, limit: 100 });

interface Run {
  status: string;
  run_at: Date;
  last_error: string | null;
  reason: string | null;
}

async function runsOf(s: ScheduleRecord): Promise<Run[]> {
  const res = await tdb.db.pool.query(
    `SELECT t.status, t.run_at, t.last_error, (SELECT e.reason FROM task_events e WHERE e.task_id = t.id ORDER BY e.id LIMIT 1) AS reason
     FROM tasks t WHERE t.schedule_id = $1 ORDER BY t.run_at`,
    [s.id],
  );
  return res.rows as Run[];
}

const submittedToday = async (tenantId: string) =>
  Number(
    (await tdb.db.pool.query(`SELECT coalesce(sum(submitted), 0) AS n FROM tenant_daily_usage WHERE tenant_id = $1 AND day = (now() AT TIME ZONE 'UTC')::date`, [tenantId]))
      .rows[0].n,
  );

/** A per-second schedule the scheduler has not reached for nine seconds (still within the misfire grace: every occurrence fires). */
async function behindBy9s(tenantId: string, name: string, overlapPolicy: OverlapPolicy): Promise<ScheduleRecord> {
  const s = await createSchedule(tdb.db, tenantId, { name, cron: "* * * * * *", timezone: "UTC", template, misfirePolicy: "SKIP", overlapPolicy, enabled: true });
  await tdb.db.pool.query(`UPDATE schedules SET next_run_at = date_trunc('second', now()) - interval '9 seconds' WHERE id = $1`, [s.id]);
  return s;
}

async function quotaTenant(limits: { daily?: number; pending?: number }): Promise<string> {
  const { tenantId } = await seedTenant(tdb.db);
  await tdb.db.pool.query(`UPDATE tenants SET daily_task_quota = $2, max_pending_tasks = $3 WHERE id = $1`, [tenantId, limits.daily ?? null, limits.pending ?? null]);
  return tenantId;
}

beforeAll(async () => {
  tdb = await createTestDatabase("schedquota");
});
afterAll(async () => tdb?.drop());

describe("cron runs and the tenant's quotas", () => {
  it("count toward dailyTaskQuota; the occurrences past it are SKIPPED saying so, notified, and the other tenants' schedules fire", async () => {
    const capped = await quotaTenant({ daily: 5 });
    await tdb.db.pool.query(`INSERT INTO webhooks (id, tenant_id, url, events, secret) VALUES ('whk_quota', $1, 'https://hooks.example.com/x', '{task.skipped}', 'whsec_x')`, [capped]);
    // Three submissions today leave room for two runs.
    await submitTasks(tdb.db, capped, Array.from({ length: 3 }, () => ({ ...template, runAt: new Date(), idempotencyKey: null, orderingKey: null, callbackUrl: null, metadata: null })), { horizonMs: 60_000 });
    expect(await submittedToday(capped)).toBe(3);
    // Both paths: ALLOW runs go in one insert per window, QUEUE ones one occurrence at a time.
    const allow = await behindBy9s(capped, "allow", "ALLOW");
    const { tenantId: free } = await seedTenant(tdb.db);
    const unlimited = await behindBy9s(free, "unlimited", "ALLOW");

    const result = await fire();
    const runs = await runsOf(allow);
    expect(runs.length).toBeGreaterThanOrEqual(9);
    // The earliest two run; every later one is SKIPPED with the quota's reason, on the task and its event.
    expect(runs.slice(0, 2).map((r) => [r.status, r.last_error])).toEqual([
      ["QUEUED", null],
      ["QUEUED", null],
    ]);
    const reason = "daily task quota of 5 reached";
    expect(runs.slice(2).map((r) => [r.status, r.last_error, r.reason])).toEqual(runs.slice(2).map(() => ["SKIPPED", reason, reason]));
    expect(await submittedToday(capped)).toBe(5);
    expect(result.overQuota).toBe(runs.length - 2);
    // Notified like any skipped run, the reason in the event.
    const notified = await tdb.db.pool.query(`SELECT payload FROM outbox WHERE kind = 'NOTIFY' AND tenant_id = $1`, [capped]);
    expect(notified.rows.map((r) => [r.payload.status, r.payload.lastError])).toEqual(runs.slice(2).map(() => ["SKIPPED", reason]));
    // The other tenant's schedule, in the same batch, ran every occurrence and counted them.
    const other = await runsOf(unlimited);
    expect(other.length).toBeGreaterThanOrEqual(9);
    expect(other.every((r) => r.status === "QUEUED")).toBe(true);
    expect(await submittedToday(free)).toBe(other.length);

    // Per occurrence (QUEUE overlap): over the quota from the first, and tried again at each later one.
    const queued = await behindBy9s(capped, "queue", "QUEUE");
    await fire();
    const queuedRuns = await runsOf(queued);
    expect(queuedRuns.length).toBeGreaterThanOrEqual(9);
    expect(queuedRuns.every((r) => r.status === "SKIPPED" && r.last_error === reason)).toBe(true);
    expect(await submittedToday(capped)).toBe(5);
    // Room again: the next occurrence runs, and counts (the ALLOW schedule, which would take the room, is stopped).
    await tdb.db.pool.query(`UPDATE schedules SET enabled = false, next_run_at = NULL WHERE id = $1`, [allow.id]);
    await tdb.db.pool.query(`UPDATE tenants SET daily_task_quota = 6 WHERE id = $1`, [capped]);
    // The next occurrence falls due within a second.
    await new Promise((r) => setTimeout(r, 1_100));
    await fire();
    const later = (await runsOf(queued)).slice(queuedRuns.length);
    expect(later.length).toBeGreaterThanOrEqual(1);
    expect(later.map((r) => r.status)).toEqual(later.map((_, i) => (i === 0 ? "QUEUED" : "SKIPPED")));
    expect(await submittedToday(capped)).toBe(6);
  });

  it("share the daily quota exactly with submissions racing them", async () => {
    const capped = await quotaTenant({ daily: 20 });
    const s = await behindBy9s(capped, "racing", "ALLOW");
    const one = () => ({ ...template, runAt: new Date(), idempotencyKey: null, orderingKey: null, callbackUrl: null, metadata: null });
    const submits = Array.from({ length: 15 }, () =>
      submitTasks(tdb.db, capped, [one()], { horizonMs: 60_000 }).then(
        () => "created",
        (error: unknown) => (error instanceof UserError ? error.code : String(error)),
      ),
    );
    const [, ...outcomes] = await Promise.all([fire(), ...submits]);
    const runs = await runsOf(s);
    const ran = runs.filter((r) => r.status !== "SKIPPED").length;
    const created = outcomes.filter((o) => o === "created").length;
    expect(outcomes.filter((o) => o !== "created").every((o) => o === "QUOTA_EXCEEDED")).toBe(true);
    // 15 + at least 9 wanted, 20 allowed: exactly 20 in all, whichever came first.
    expect(ran + created).toBe(20);
    expect(await submittedToday(capped)).toBe(20);
  });

  it("count toward maxPendingTasks; the occurrences past it are SKIPPED saying so", async () => {
    const capped = await quotaTenant({ pending: 4 });
    await submitTasks(tdb.db, capped, [{ ...template, runAt: new Date(), idempotencyKey: null, orderingKey: null, callbackUrl: null, metadata: null }], { horizonMs: 60_000 });
    const s = await behindBy9s(capped, "pending", "ALLOW");
    await fire();
    const runs = await runsOf(s);
    expect(runs.length).toBeGreaterThanOrEqual(9);
    expect(runs.slice(0, 3).every((r) => r.status === "QUEUED" && r.last_error === null)).toBe(true);
    expect(runs.slice(3).every((r) => r.status === "SKIPPED" && r.last_error === "pending task limit of 4 reached")).toBe(true);
    const pending = await tdb.db.pool.query(`SELECT count(*)::int AS n FROM tasks WHERE tenant_id = $1 AND status IN ('SCHEDULED', 'QUEUED', 'RETRYING', 'BLOCKED')`, [capped]);
    expect(pending.rows[0].n).toBe(4);
    // Fired runs count toward the day's usage too, in the tenant's session rows (no daily quota to check).
    expect(await submittedToday(capped)).toBe(4);
  });

  it("leave CANCEL_RUNNING's previous run alone when the occurrence that would replace it is past a quota", async () => {
    const capped = await quotaTenant({ daily: 1 });
    const s = await createSchedule(tdb.db, capped, { name: "cancel-running", cron: "* * * * * *", timezone: "UTC", template, misfirePolicy: "SKIP", overlapPolicy: "CANCEL_RUNNING", enabled: true });
    await tdb.db.pool.query(`UPDATE schedules SET next_run_at = date_trunc('second', now()) WHERE id = $1`, [s.id]);
    await fire();
    const [first] = await runsOf(s);
    expect(first?.status).toBe("QUEUED");
    // The next occurrence falls due within a second; the day's quota is spent.
    await new Promise((r) => setTimeout(r, 1_100));
    await fire();
    const runs = await runsOf(s);
    expect(runs.length).toBeGreaterThanOrEqual(2);
    // Cancelling the first for a run that cannot start left the schedule with nothing running.
    expect(runs.map((r) => r.status)).toEqual(["QUEUED", ...runs.slice(1).map(() => "SKIPPED")]);
    expect(runs.slice(1).every((r) => r.last_error === "daily task quota of 1 reached")).toBe(true);
  });
});
