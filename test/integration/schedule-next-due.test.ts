import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF } from "@tasklane/core";
import { createSchedule, fireDueSchedules, updateSchedule } from "@tasklane/db";
import { seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

/** What the schedule loop sleeps on: fireDueSchedules says when the next occurrence falls due, and fires nothing before. */
let tdb: TestDatabase;
let tenantId: string;
const template = { type: "tick", queue: "default", payload: null, priority: "NORMAL" as const, maxAttempts: 1, backoff: { ...DEFAULT_BACKOFF }, timeoutSeconds: 60 };
const fire = () => fireDueSchedules(tdb.db, { lookaheadMs: 2_000, horizonMs: 60_000, limit: 100 });

beforeAll(async () => {
  tdb = await createTestDatabase("nextdue");
  ({ tenantId } = await seedTenant(tdb.db));
});
afterAll(async () => tdb?.drop());

describe("fireDueSchedules' next due time", () => {
  it("is null with no enabled schedule", async () => {
    expect(await fire()).toMatchObject({ nextDueInMs: null, schedules: 0 });
  });

  it("counts down to an occurrence, less the lookahead for ALLOW schedules, and disabled ones do not count", async () => {
    // Next New Year's midnight (UTC): months away, whatever today is.
    const base = { cron: "0 0 1 1 *", timezone: "UTC", template, misfirePolicy: "SKIP" as const, enabled: true };
    const skip = await createSchedule(tdb.db, tenantId, { ...base, name: "yearly-skip", overlapPolicy: "SKIP" });
    const untilNewYear = (skip.nextRunAt as Date).getTime() - Date.now();
    const skipOnly = await fire();
    expect(skipOnly.schedules).toBe(0);
    expect(skipOnly.nextDueInMs).toBeGreaterThan(untilNewYear - 60_000);
    expect(skipOnly.nextDueInMs).toBeLessThanOrEqual(untilNewYear + 60_000);

    await createSchedule(tdb.db, tenantId, { ...base, name: "yearly-allow", overlapPolicy: "ALLOW" });
    const withAllow = await fire();
    // The same instant, materialised 2 s ahead.
    expect(skipOnly.nextDueInMs! - withAllow.nextDueInMs!).toBeGreaterThan(1_000);
    expect(skipOnly.nextDueInMs! - withAllow.nextDueInMs!).toBeLessThan(3_000);

    await updateSchedule(tdb.db, tenantId, skip.id, { enabled: false }, { actor: "test", horizonMs: 60_000 });
    const allowOnly = await fire();
    expect(allowOnly.nextDueInMs).toBeLessThanOrEqual(withAllow.nextDueInMs! + 1_000);
  });

  it("is absent once an occurrence is due, and the run is fired", async () => {
    const every = await createSchedule(tdb.db, tenantId, {
      name: "every-second", cron: "* * * * * *", timezone: "UTC", template, misfirePolicy: "SKIP", overlapPolicy: "SKIP", enabled: true,
    });
    await new Promise((r) => setTimeout(r, Math.max(0, (every.nextRunAt as Date).getTime() - Date.now()) + 50));
    const fired = await fire();
    expect(fired.nextDueInMs).toBeUndefined();
    expect(fired.fired).toBe(1);
    const next = await fire();
    expect(next.nextDueInMs).toBeGreaterThanOrEqual(0);
    expect(next.nextDueInMs).toBeLessThanOrEqual(1_000);
  });
});
