import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF } from "@tasklane/core";
import { createSchedule, fireDueSchedules } from "@tasklane/db";
import { seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

/**
 * Fairness between tenants when many schedules fall due at once: the
 * scheduler takes due schedules in batches, and a tenant with many of them
 * must not fill every batch ahead of another tenant's.
 */
let tdb: TestDatabase;
const template = { type: "tick", queue: "default", payload: null, priority: "NORMAL" as const, maxAttempts: 1, backoff: { ...DEFAULT_BACKOFF }, timeoutSeconds: 60 };

beforeAll(async () => {
  tdb = await createTestDatabase("schedfair");
});
afterAll(async () => tdb?.drop());

async function schedulesOf(tenantId: string, label: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await createSchedule(tdb.db, tenantId, {
      name: `${label}-${i}`, cron: "* * * * * *", timezone: "UTC", template, misfirePolicy: "SKIP", overlapPolicy: "SKIP", enabled: true,
    });
  }
}

/** How many of the tenant's schedules have fired (a batch may fire a schedule's next second too). */
const firedSchedulesOf = async (tenantId: string) =>
  Number((await tdb.db.pool.query<{ n: string }>(`SELECT count(DISTINCT schedule_id) AS n FROM tasks WHERE tenant_id = $1`, [tenantId])).rows[0]!.n);

describe("a batch of due schedules", () => {
  it("takes a turn per tenant: a tenant's few schedules are not left behind another tenant's many, even ones due a second earlier", async () => {
    const busy = (await seedTenant(tdb.db)).tenantId;
    const quiet = (await seedTenant(tdb.db)).tenantId;
    await schedulesOf(busy, "busy", 30);
    await schedulesOf(quiet, "quiet", 3);
    // Both within the misfire grace, so every occurrence fires: the busy tenant's a second earlier.
    await tdb.db.pool.query(`UPDATE schedules SET next_run_at = date_trunc('second', now()) - interval '2 seconds' WHERE tenant_id = $1`, [busy]);
    await tdb.db.pool.query(`UPDATE schedules SET next_run_at = date_trunc('second', now()) - interval '1 second' WHERE tenant_id = $1`, [quiet]);

    const first = await fireDueSchedules(tdb.db, { lookaheadMs: 0, horizonMs: 60_000, limit: 10 });
    expect(first.schedules).toBe(10);
    // All three of the quiet tenant's schedules in the first batch, the rest of it the busy one's.
    expect(await firedSchedulesOf(quiet)).toBe(3);
    expect(await firedSchedulesOf(busy)).toBe(7);

    // Every due schedule is still fired once, batch after batch.
    for (let i = 0; i < 10 && (await fireDueSchedules(tdb.db, { lookaheadMs: 0, horizonMs: 60_000, limit: 10 })).schedules > 0; i++);
    expect(await firedSchedulesOf(busy)).toBe(30);
  });
});
