import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF } from "@tasklane/core";
import { createSchedule, deleteSchedule, fireDueSchedules, updateSchedule, type ScheduleRecord } from "@tasklane/db";
import { seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

/**
 * Runs materialised ahead of their occurrence (ALLOW schedules, SCHEDULED
 * tasks) follow the schedule as it is when they fall due: a change, a disable
 * or a delete skips them, and the changed schedule's own runs take their place.
 */
let tdb: TestDatabase;
let tenantId: string;
const template = { type: "tick", queue: "default", payload: null, priority: "NORMAL" as const, maxAttempts: 1, backoff: { ...DEFAULT_BACKOFF }, timeoutSeconds: 60 };
// An hour ahead, so each firing materialises the schedule's next occurrences however slow the machine.
const fire = () => fireDueSchedules(tdb.db, { lookaheadMs: 3_600_000, horizonMs: 60_000, limit: 100 });
const editor = { actor: "test", horizonMs: 60_000 };

interface Run {
  id: string;
  status: string;
  occurrence_key: string | null;
  run_at: Date;
  due: boolean;
  reason: string | null;
}

async function runsOf(s: ScheduleRecord): Promise<Run[]> {
  const res = await tdb.db.pool.query(
    `SELECT t.id, t.status, t.occurrence_key, t.run_at, t.run_at <= now() AS due,
       (SELECT e.reason FROM task_events e WHERE e.task_id = t.id ORDER BY e.id DESC LIMIT 1) AS reason
     FROM tasks t WHERE t.schedule_id = $1 ORDER BY t.run_at, t.id`,
    [s.id],
  );
  return res.rows as Run[];
}

/** The runs materialised since `before` was read: those of the version in force since. */
const newSince = (runs: Run[], before: Run[]) => runs.filter((r) => !before.some((b) => b.id === r.id));
const instants = (runs: Run[]) => runs.map((r) => r.run_at.getTime());

beforeAll(async () => {
  tdb = await createTestDatabase("schedchg");
  ({ tenantId } = await seedTenant(tdb.db));
});
afterAll(async () => tdb?.drop());

describe("schedule changes and the runs materialised ahead", () => {
  it("a change skips the old version's future runs and the new version's replace them; a disable and a delete skip them; a run already due is kept", async () => {
    const s = await createSchedule(tdb.db, tenantId, {
      name: "half-hourly",
      cron: "*/30 * * * *",
      timezone: "UTC",
      template,
      misfirePolicy: "SKIP",
      overlapPolicy: "ALLOW",
      enabled: true,
    });
    await fire();
    const first = await runsOf(s);
    expect(first.length).toBeGreaterThanOrEqual(2);
    expect(first.map((r) => [r.status, r.due])).toEqual(first.map(() => ["SCHEDULED", false]));

    const changed = await updateSchedule(tdb.db, tenantId, s.id, { template: { ...template, type: "tock" } }, editor);
    expect(changed.schedule.version).toBe(2);
    const skipped = await runsOf(s);
    expect(skipped.map((r) => [r.status, r.reason])).toEqual(first.map(() => ["SKIPPED", "schedule changed (version 2)"]));
    // Their occurrence keys are released for the new version's runs.
    expect(skipped.map((r) => r.occurrence_key)).toEqual(first.map(() => null));

    await fire();
    const second = newSince(await runsOf(s), skipped);
    expect(second.length).toBeGreaterThanOrEqual(1);
    expect(second.every((r) => r.status === "SCHEDULED" && !r.due)).toBe(true);
    // The same occurrences as the skipped ones: nothing lost, nothing doubled.
    expect(instants(second)).toEqual(instants(first.slice(0, second.length)));

    await updateSchedule(tdb.db, tenantId, s.id, { enabled: false }, editor);
    expect(newSince(await runsOf(s), skipped).map((r) => [r.status, r.reason])).toEqual(second.map(() => ["SKIPPED", "schedule disabled"]));
    await fire();
    expect((await runsOf(s)).filter((r) => r.status === "SCHEDULED" && !r.due)).toEqual([]);

    const beforeEnable = await runsOf(s);
    await updateSchedule(tdb.db, tenantId, s.id, { enabled: true }, editor);
    await fire();
    const fourth = newSince(await runsOf(s), beforeEnable);
    expect(fourth.length).toBeGreaterThanOrEqual(2);
    // One of them falls due (its promotion to QUEUED has not happened yet): it is the schedule's past, and runs.
    const [due, ...ahead] = fourth;
    await tdb.db.pool.query(`UPDATE tasks SET run_at = now() - interval '1 second' WHERE id = $1`, [due!.id]);
    await deleteSchedule(tdb.db, tenantId, s.id, editor);
    const last = newSince(await runsOf(s), beforeEnable);
    expect(last.find((r) => r.id === due!.id)).toMatchObject({ status: "SCHEDULED", due: true });
    expect(last.filter((r) => r.id !== due!.id).map((r) => [r.status, r.reason])).toEqual(ahead.map(() => ["SKIPPED", "schedule deleted"]));
  });

  it("a run SKIPPED by the misfire policy notifies like any task that ends SKIPPED (task.skipped to the tenant's webhooks)", async () => {
    await tdb.db.pool.query(`INSERT INTO webhooks (id, tenant_id, url, events, secret) VALUES ('whk_skipped', $1, 'https://hooks.example.com/x', '{task.skipped}', 'whsec_x')`, [tenantId]);
    const s = await createSchedule(tdb.db, tenantId, { name: "minutely", cron: "* * * * *", timezone: "UTC", template, misfirePolicy: "SKIP", overlapPolicy: "SKIP", enabled: true });
    // The scheduler was away for ten minutes.
    await tdb.db.pool.query(`UPDATE schedules SET next_run_at = date_trunc('minute', now()) - interval '10 minutes' WHERE id = $1`, [s.id]);
    await fireDueSchedules(tdb.db, { lookaheadMs: 2_000, horizonMs: 60_000, limit: 100, graceMs: 1_000 });
    const skipped = (await tdb.db.pool.query(`SELECT id FROM tasks WHERE schedule_id = $1 AND status = 'SKIPPED'`, [s.id])).rows.map((r) => r.id as string);
    expect(skipped.length).toBeGreaterThanOrEqual(9);
    const notified = await tdb.db.pool.query(`SELECT task_id, payload FROM outbox WHERE kind = 'NOTIFY' AND task_id = ANY($1)`, [skipped]);
    expect(notified.rows.map((r) => r.task_id).sort()).toEqual([...skipped].sort());
    expect(notified.rows.every((r) => r.payload.status === "SKIPPED")).toBe(true);
  });
});

describe("occurrences already due when a schedule changes", () => {
  const everySecond = (name: string, misfirePolicy: "CATCH_UP" | "SKIP", overlapPolicy: "CANCEL_RUNNING" | "ALLOW") =>
    createSchedule(tdb.db, tenantId, { name, cron: "* * * * * *", timezone: "UTC", template, misfirePolicy, overlapPolicy, enabled: true });
  /** The scheduler did not get to the schedule for nine seconds. */
  const freeze = async (s: ScheduleRecord) =>
    (await tdb.db.pool.query<{ at: Date }>(`UPDATE schedules SET next_run_at = date_trunc('second', now()) - interval '9 seconds' WHERE id = $1 RETURNING next_run_at AS at`, [s.id])).rows[0]!.at;
  const runsAt = async (s: ScheduleRecord) =>
    (await tdb.db.pool.query(`SELECT type, status, run_at FROM tasks WHERE schedule_id = $1 ORDER BY run_at`, [s.id])).rows as { type: string; status: string; run_at: Date }[];
  const seconds = (from: Date, to: Date) => Array.from({ length: (to.getTime() - from.getTime()) / 1000 }, (_, i) => from.getTime() + i * 1000);

  it("are materialised under the old version first: CATCH_UP runs each, SKIP records the missed ones SKIPPED; the new version starts after now", async () => {
    const catchUp = await everySecond("due-catch-up", "CATCH_UP", "CANCEL_RUNNING");
    const skip = await everySecond("due-skip", "SKIP", "ALLOW");
    for (const s of [catchUp, skip]) {
      const frozenAt = await freeze(s);
      const { schedule } = await updateSchedule(tdb.db, tenantId, s.id, { template: { ...template, type: "tock" } }, { ...editor, graceMs: 5_000 });
      const next = schedule.nextRunAt as Date;
      expect(next.getTime()).toBeGreaterThan(frozenAt.getTime() + 9_000);
      const runs = await runsAt(s);
      // One run of the old definition per occurrence from the frozen next_run_at up to the change, none lost.
      expect(runs.map((r) => r.run_at.getTime())).toEqual(seconds(frozenAt, next));
      expect(runs.every((r) => r.type === "tick")).toBe(true);
      // The change ran within the second before `next`: older than next - 7 s is surely past the 5 s grace, newer than next - 5 s surely not.
      const late = (r: { run_at: Date }) => next.getTime() - r.run_at.getTime() > 7_000;
      const onTime = (r: { run_at: Date }) => next.getTime() - r.run_at.getTime() <= 5_000;
      if (s.id === catchUp.id) {
        // Each fired; CANCEL_RUNNING cancelled each previous one.
        expect(runs.slice(0, -1).map((r) => r.status)).toEqual(runs.slice(0, -1).map(() => "CANCELLED"));
        expect(runs.at(-1)!.status).toBe("QUEUED");
      } else {
        expect(runs.filter(late).map((r) => r.status)).toEqual(runs.filter(late).map(() => "SKIPPED"));
        expect(runs.filter(onTime).map((r) => r.status)).toEqual(runs.filter(onTime).map(() => "QUEUED"));
        const statuses = runs.map((r) => r.status);
        expect(statuses).toEqual([...statuses].sort((a, b) => (a === b ? 0 : a === "SKIPPED" ? -1 : 1)));
      }
      await deleteSchedule(tdb.db, tenantId, s.id, editor);
    }
  });

  it("an update that changes nothing leaves the schedule alone, and the scheduler catches up every missed occurrence", async () => {
    const s = await everySecond("due-unchanged", "CATCH_UP", "CANCEL_RUNNING");
    const frozenAt = await freeze(s);
    for (const changes of [{}, { cron: s.cron, enabled: true, template: { ...template } }]) {
      const { schedule } = await updateSchedule(tdb.db, tenantId, s.id, changes, editor);
      expect(schedule).toMatchObject({ version: 1, nextRunAt: frozenAt });
    }
    expect(await runsAt(s)).toEqual([]);
    await fireDueSchedules(tdb.db, { lookaheadMs: 0, horizonMs: 60_000, limit: 100 });
    const runs = await runsAt(s);
    expect(runs.length).toBeGreaterThanOrEqual(10);
    expect(runs.map((r) => r.run_at.getTime())).toEqual(seconds(frozenAt, new Date(runs.at(-1)!.run_at.getTime() + 1000)));
    expect(runs.every((r) => r.status !== "SKIPPED")).toBe(true);
    await deleteSchedule(tdb.db, tenantId, s.id, editor);
  });
});


describe("a run a worker started ahead of its occurrence", () => {
  it("is not materialised again by a changed schedule, whatever the changes: the new version starts at the next occurrence", async () => {
    const s = await createSchedule(tdb.db, tenantId, { name: "started-ahead", cron: "*/30 * * * *", timezone: "UTC", template, misfirePolicy: "SKIP", overlapPolicy: "ALLOW", enabled: true });
    await fire();
    const [started, ahead] = await runsOf(s);
    expect(ahead).toBeDefined();
    // A PUSH worker took it before its instant (WORKER_START_AHEAD_MS); it is not due yet.
    await tdb.db.pool.query(`UPDATE tasks SET status = 'RUNNING', started_at = now(), attempts = 1 WHERE id = $1`, [started!.id]);
    const changes = [{ template: { ...template, type: "tock" } }, { overlapPolicy: "CANCEL_RUNNING" as const }, { enabled: false }, { enabled: true }, { overlapPolicy: "ALLOW" as const }];
    for (const change of changes) {
      const { schedule } = await updateSchedule(tdb.db, tenantId, s.id, change, editor);
      expect(schedule.nextRunAt).toEqual(change.enabled === false ? null : ahead!.run_at);
    }
    await fire();
    const runs = await runsOf(s);
    const live = runs.filter((r) => r.status !== "SKIPPED");
    // One run per occurrence: the started one stands for its instant, the skipped one ahead is replaced once.
    expect(new Set(instants(live)).size).toBe(live.length);
    expect(live.filter((r) => r.run_at.getTime() === started!.run_at.getTime()).map((r) => [r.id, r.status])).toEqual([[started!.id, "RUNNING"]]);
    expect(live.filter((r) => r.run_at.getTime() === ahead!.run_at.getTime())).toHaveLength(1);
  });
});
