/**
 * The cost of the notifier's claim (claimDueDeliveries) passing over a
 * tenant's rows to an origin already at its cap: each row passed over is
 * tested against that tenant's full origins only, so the claim's work does not
 * grow with how many other origins, of other tenants, this process has busy.
 * Work is counted in the plan's rows (EXPLAIN ANALYZE), not timed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimDueDeliveries, originKey, type Database, type InFlightCounts } from "@tasklane/db";
import { explainNodes, type PlanNode } from "../helpers/query-plans.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { seedNotifierTenant } from "./notifier-harness.js";

let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase("claimplan");
});
afterAll(async () => {
  await tdb?.drop();
});

/** Rows every node of the plan produced or filtered out, over all its loops: the statement's work, clock-free. */
const rowsHandled = (plan: PlanNode[]): number =>
  plan.reduce((sum, n) => sum + ((n["Actual Rows"] ?? 0) + (n["Rows Removed by Filter"] ?? 0)) * (n["Actual Loops"] ?? 1), 0);

/** The claim's statement for `inFlight`, explained with ANALYZE in a transaction rolled back (the claim locks rows). */
async function claimWork(inFlight: InFlightCounts): Promise<number> {
  let statement: { text: string; values: unknown[] } | undefined;
  const recorder = { pool: { query: async (config: { text: string; values: unknown[] }) => { statement = config; return { rows: [] }; } } };
  await claimDueDeliveries(recorder as unknown as Database, {
    limit: 28, lockMs: 15_000, perOriginLimit: 4, tenantShare: 16, inFlight, afterTenant: "", walkLimit: 1_000,
  });
  if (statement === undefined) throw new Error("the claim sent no statement");
  const client = await tdb.db.pool.connect();
  try {
    await client.query("BEGIN");
    return rowsHandled(await explainNodes(client, statement.text, statement.values));
  } finally {
    await client.query("ROLLBACK");
    client.release();
  }
}

describe("claimDueDeliveries passing over a full origin's backlog", () => {
  it("does work that does not grow with other tenants' busy origins", async () => {
    const a = await seedNotifierTenant(tdb.db);
    await tdb.db.pool.query(
      `INSERT INTO webhook_deliveries (id, tenant_id, url, event, body, next_attempt_at)
       SELECT 'dlv_slow' || g, $1, 'https://slow.example/hook', 'task.succeeded', '{}', now() - interval '1 hour' + g * interval '1 ms'
       FROM generate_series(1, 2500) g
       UNION ALL SELECT 'dlv_ok' || g, $1, 'https://healthy.example/hook', 'task.succeeded', '{}', now() - interval '1 minute'
       FROM generate_series(1, 2) g`,
      [a.tenantId],
    );
    await tdb.db.pool.query("ANALYZE webhook_deliveries");
    const own = new Map([[originKey(a.tenantId, "https://slow.example"), 4]]);
    const alone = await claimWork({ byOrigin: own, byTenant: new Map([[a.tenantId, 4]]) });
    // 60 other tenants (no due rows here) with an origin at its cap in this process, as under lending; A's comes last.
    const crowd: InFlightCounts = { byOrigin: new Map(), byTenant: new Map() };
    for (let i = 0; i < 60; i++) {
      crowd.byOrigin.set(originKey(`ten_other${i}`, `https://hung${i}.example`), 4);
      crowd.byTenant.set(`ten_other${i}`, 4);
    }
    for (const [key, n] of own) crowd.byOrigin.set(key, n);
    crowd.byTenant.set(a.tenantId, 4);
    const crowded = await claimWork(crowd);
    // The 2,000 rows passed over are each tested against A's one full origin, whatever else is busy.
    expect(crowded, `rows handled: ${alone} alone, ${crowded} among 60 busy origins`).toBeLessThan(alone + 1_000);
  });
});
