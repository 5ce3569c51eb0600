/**
 * The notifier's claim (claimDueDeliveries) skips a tenant's origin at its cap
 * in one step: a receiver that hangs holds its 4 requests for the whole
 * timeout while its backlog grows, and the tenant's other endpoints must go
 * on, as Svix and Stripe keep a slow endpoint from delaying a tenant's others.
 * Work is counted in the rows the plan reads from webhook_deliveries
 * (EXPLAIN ANALYZE), not timed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimDueDeliveries, fillDeliveryOrigins, originKey, type ClaimOptions, type Database, type InFlightCounts } from "@tasklane/db";
import { explainNodes, rowsRead } from "../helpers/query-plans.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { seedNotifierTenant } from "./notifier-harness.js";

let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase("claimfull");
});
afterAll(async () => {
  await tdb?.drop();
});

const options = (inFlight: InFlightCounts): ClaimOptions => ({
  limit: 28, lockMs: 15_000, perOriginLimit: 4, tenantShare: 16, inFlight, afterTenant: "", walkLimit: 1_000,
});

/** Rows of webhook_deliveries the claim's statement reads for `inFlight`, explained with ANALYZE in a transaction rolled back (the claim locks rows). */
async function claimReads(inFlight: InFlightCounts): Promise<number> {
  let statement: { text: string; values: unknown[] } | undefined;
  const recorder = { pool: { query: async (config: { text: string; values: unknown[] }) => { statement = config; return { rows: [] }; } } };
  await claimDueDeliveries(recorder as unknown as Database, options(inFlight));
  if (statement === undefined) throw new Error("the claim sent no statement");
  const client = await tdb.db.pool.connect();
  try {
    await client.query("BEGIN");
    return rowsRead(await explainNodes(client, statement.text, statement.values), "webhook_deliveries");
  } finally {
    await client.query("ROLLBACK");
    client.release();
  }
}

/** `count` deliveries of `tenantId` to `url`, due from `agoMs` ago, 1 ms apart, ids `<prefix><n>` (n from `from`). */
async function due(tenantId: string, url: string, prefix: string, from: number, count: number, agoMs: number): Promise<void> {
  await tdb.db.pool.query(
    `INSERT INTO webhook_deliveries (id, tenant_id, url, event, body, next_attempt_at)
     SELECT $2 || g, $1, $3, 'task.succeeded', '{}', now() - $4 * interval '1 ms' + g * interval '1 ms'
     FROM generate_series($5::int, $5::int + $6::int - 1) g`,
    [tenantId, prefix, url, agoMs, from, count],
  );
}

describe("claimDueDeliveries with a tenant's origin at its cap", () => {
  it("takes the tenant's other origin's rows past 10,000 due at the full one, reading as many rows as with 10", async () => {
    const a = await seedNotifierTenant(tdb.db);
    // A receiver that hangs: its 4 oldest in flight (locked), the rest due behind them, all older than the healthy ones.
    await due(a.tenantId, "https://hung.example/hook", "dlv_hung", 1, 10, 3_600_000);
    await tdb.db.pool.query(
      "UPDATE webhook_deliveries SET locked_until = now() + interval '1 hour' WHERE id IN ('dlv_hung1', 'dlv_hung2', 'dlv_hung3', 'dlv_hung4')",
    );
    await due(a.tenantId, "https://healthy.example/hook", "dlv_ok", 1, 5, 60_000);
    const inFlight: InFlightCounts = {
      byOrigin: new Map([[originKey(a.tenantId, "https://hung.example"), 4]]),
      byTenant: new Map([[a.tenantId, 4]]),
    };
    await tdb.db.pool.query("ANALYZE webhook_deliveries");
    const behind10 = await claimReads(inFlight);

    await due(a.tenantId, "https://hung.example/hook", "dlv_hung", 11, 9_990, 3_599_000);
    await tdb.db.pool.query("ANALYZE webhook_deliveries");
    const behind10k = await claimReads(inFlight);

    // The full origin costs the claim an index descent, not its backlog: origins, rows it can start and their locks.
    expect(behind10k, `rows read: ${behind10} with 10 rows behind the full origin, ${behind10k} with 10,000`).toBeLessThanOrEqual(behind10);
    expect(behind10k).toBeLessThan(50);

    const claimed = await claimDueDeliveries(tdb.db, options(inFlight));
    // The healthy origin's 4 oldest, as many as its cap of 4 allows; none of the hung origin's.
    expect(claimed.deliveries.map((d) => d.id).sort()).toEqual(["dlv_ok1", "dlv_ok2", "dlv_ok3", "dlv_ok4"]);
    expect(new Set(claimed.deliveries.map((d) => d.origin))).toEqual(new Set(["https://healthy.example"]));
  });

  it("fills a delivery's origin from its URL whoever writes the row, and keeps it in step with the URL", async () => {
    const a = await seedNotifierTenant(tdb.db);
    await tdb.db.pool.query(
      `INSERT INTO webhook_deliveries (id, tenant_id, url, event, body, origin) VALUES
         ('dlv_o1', $1, 'HTTPS://user:pw@Example.COM:443/x?y#z', 'task.succeeded', '{}', DEFAULT),
         ('dlv_o2', $1, 'http://example.com:8080', 'task.succeeded', '{}', 'https://forged.example')`,
      [a.tenantId],
    );
    const origins = async () =>
      (await tdb.db.pool.query<{ id: string; origin: string }>("SELECT id, origin FROM webhook_deliveries WHERE tenant_id = $1 ORDER BY id", [a.tenantId])).rows;
    expect(await origins()).toEqual([{ id: "dlv_o1", origin: "https://example.com" }, { id: "dlv_o2", origin: "http://example.com:8080" }]);
    // A row finished before the column existed (origin null) gets it when it is written again, e.g. redelivered.
    await tdb.db.pool.query("ALTER TABLE webhook_deliveries DISABLE TRIGGER webhook_deliveries_origin_update");
    await tdb.db.pool.query("UPDATE webhook_deliveries SET origin = NULL, status = 'FAILED' WHERE id = 'dlv_o1'");
    await tdb.db.pool.query("ALTER TABLE webhook_deliveries ENABLE TRIGGER webhook_deliveries_origin_update");
    await tdb.db.pool.query("UPDATE webhook_deliveries SET status = 'PENDING' WHERE id = 'dlv_o1'");
    await tdb.db.pool.query("UPDATE webhook_deliveries SET url = 'http://Other.example:80/' WHERE id = 'dlv_o2'");
    expect(await origins()).toEqual([{ id: "dlv_o1", origin: "https://example.com" }, { id: "dlv_o2", origin: "http://other.example" }]);
  });

  it("passes over deliveries left without an origin from before the column, until a batched pass fills them", async () => {
    const a = await seedNotifierTenant(tdb.db);
    // As written by a release without the column: triggers off, origin null.
    await tdb.db.pool.query("ALTER TABLE webhook_deliveries DISABLE TRIGGER webhook_deliveries_origin_insert");
    try {
      await due(a.tenantId, "https://Legacy.example:443/hook", "dlv_legacy", 1, 5, 60_000);
    } finally {
      await tdb.db.pool.query("ALTER TABLE webhook_deliveries ENABLE TRIGGER webhook_deliveries_origin_insert");
    }
    const none: InFlightCounts = { byOrigin: new Map(), byTenant: new Map() };
    expect((await claimDueDeliveries(tdb.db, options(none))).deliveries.filter((d) => d.tenantId === a.tenantId)).toEqual([]);
    // Batches of 2, as the notifier's start-up pass goes (1,000 a batch there): until one comes back short.
    const batches: number[] = [];
    for (let after: string | null = ""; after !== null; ) {
      const { filled, lastId } = await fillDeliveryOrigins(tdb.db, after, 2);
      batches.push(filled);
      after = filled < 2 ? null : lastId;
    }
    expect(batches.reduce((sum, n) => sum + n, 0)).toBe(5);
    const claimed = (await claimDueDeliveries(tdb.db, options(none))).deliveries.filter((d) => d.tenantId === a.tenantId);
    expect(claimed.map((d) => [d.id, d.origin]).sort()).toEqual(
      ["dlv_legacy1", "dlv_legacy2", "dlv_legacy3", "dlv_legacy4"].map((id) => [id, "https://legacy.example"]),
    );
  });
});
