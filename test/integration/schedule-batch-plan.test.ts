/**
 * A firing batch's cost is bounded by the batch, not by the backlog of due
 * schedules: after downtime, or at the top of the hour, thousands of
 * schedules fall due at once, and ranking every one of them on each batch of
 * 100 made draining N of them cost ~N²/100 row reads. The batch walks the
 * tenants with enabled schedules and reads each due tenant's oldest due rows
 * from schedules_due_by_tenant_idx (migration schedules_due_by_tenant), still
 * a turn per tenant (schedule-fairness.test.ts).
 */
import { DEFAULT_BACKOFF } from "@tasklane/core";
import { createDatabase, createSchedule, fireDueSchedules, type Database } from "@tasklane/db";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { explainNodes, rowsRead } from "../helpers/query-plans.js";
import { seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

const TENANTS = 5;
/** Due schedules per tenant: the most a tenant may have (its live schedules cap). */
const PER_TENANT = 1_000;
const LIMIT = 100;
const template = { type: "tick", queue: "default", payload: null, priority: "NORMAL" as const, maxAttempts: 1, backoff: { ...DEFAULT_BACKOFF }, timeoutSeconds: 60 };

let tdb: TestDatabase;
const tenants: string[] = [];

beforeAll(async () => {
  tdb = await createTestDatabase("schedbatch");
  for (let t = 0; t < TENANTS; t++) {
    const { tenantId } = await seedTenant(tdb.db);
    tenants.push(tenantId);
    const base = await createSchedule(tdb.db, tenantId, {
      name: "base", cron: "0 * * * *", timezone: "UTC", template, misfirePolicy: "SKIP", overlapPolicy: "SKIP", enabled: true,
    });
    // Copies of it, all due at the same instant (an hourly cron at the top of the hour), within the misfire grace.
    await tdb.db.pool.query(
      `INSERT INTO schedules (id, tenant_id, name, cron, timezone, enabled, version, misfire_policy, overlap_policy, template, next_run_at)
       SELECT $1 || '_' || i, tenant_id, 'hourly-' || i, cron, timezone, enabled, version, misfire_policy, overlap_policy, template,
         date_trunc('second', now()) - interval '5 seconds'
       FROM schedules, generate_series(1, ${PER_TENANT - 1}) i WHERE id = $1`,
      [base.id],
    );
    await tdb.db.pool.query(`UPDATE schedules SET next_run_at = date_trunc('second', now()) - interval '5 seconds' WHERE id = $1`, [base.id]);
  }
  await tdb.db.pool.query("ANALYZE schedules");
});
afterAll(async () => tdb?.drop());

/** A Database on the test database that keeps every statement its connections send, with its values. */
function recordingDatabase(): { db: Database; statements: { text: string; values: unknown[] }[] } {
  const db = createDatabase({ url: tdb.url, max: 1, applicationName: "tasklane-test-recording" });
  const statements: { text: string; values: unknown[] }[] = [];
  db.pool.on("connect", (client: pg.PoolClient) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) => {
      if (typeof args[0] === "string") statements.push({ text: args[0], values: (args[1] as unknown[] | undefined) ?? [] });
      return query(...args);
    }) as typeof client.query;
  });
  return { db, statements };
}

const firedPerTenant = async () => {
  const res = await tdb.db.pool.query<{ tenant_id: string; n: number }>(`SELECT tenant_id, count(*)::int AS n FROM tasks GROUP BY tenant_id`);
  return tenants.map((t) => res.rows.find((r) => r.tenant_id === t)?.n ?? 0);
};

describe("a firing batch with thousands of schedules due", () => {
  it(`reads rows in proportion to its tenants and its limit, not to the ${TENANTS * PER_TENANT} due schedules, and still takes a turn per tenant`, async () => {
    const recording = recordingDatabase();
    try {
      const first = await fireDueSchedules(recording.db, { lookaheadMs: 2_000, horizonMs: 60_000, limit: LIMIT });
      expect(first.schedules).toBe(LIMIT);
    } finally {
      await recording.db.close();
    }
    // A turn per tenant: each tenant's first 20.
    expect(await firedPerTenant()).toEqual(tenants.map(() => LIMIT / TENANTS));

    // The statement that took the batch, explained (and so run) again in a transaction rolled back.
    const take = recording.statements.find((s) => /FOR UPDATE/.test(s.text));
    expect(take).toBeDefined();
    const client = await tdb.db.pool.connect();
    try {
      await client.query("BEGIN");
      const plan = await explainNodes(client, take!.text, take!.values);
      const read = rowsRead(plan, "schedules");
      // Still nearly all due (100 of 5,000 fired). Ranking every due row read each of them twice (10,000 rows; 111 now).
      expect(read).toBeGreaterThan(0);
      expect(read).toBeLessThan(TENANTS * LIMIT);
      const taken = plan[0]!["Actual Rows"];
      expect(taken).toBe(LIMIT);
    } finally {
      await client.query("ROLLBACK");
      client.release();
    }
  });

  it("walks at most walkLimit tenants a batch, and successive batches take the rest in turn", async () => {
    const seen = new Set<string>();
    let afterTenant = "";
    for (let i = 0; i < TENANTS; i++) {
      const before = await firedPerTenant();
      const batch = await fireDueSchedules(tdb.db, { lookaheadMs: 2_000, horizonMs: 60_000, limit: 10, afterTenant, walkLimit: 2 });
      expect(batch.truncated).toBe(true);
      const after = await firedPerTenant();
      const firedNow = tenants.filter((_, t) => after[t]! > before[t]!);
      // The two tenants walked, five each.
      expect(firedNow).toHaveLength(2);
      for (const t of firedNow) seen.add(t);
      afterTenant = batch.walkedTo!;
    }
    expect(seen.size).toBe(TENANTS);
  });
});
