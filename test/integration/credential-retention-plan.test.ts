/**
 * Retention's prune of API keys (pruneCredentials) reads the partial indexes
 * over revoked and expiring keys (migrations api_keys_revoked_prune and
 * api_keys_expired_prune), not the whole table: a bounded number of rows
 * however many live keys there are, with the retention set and with history
 * kept (TASK_RETENTION_DAYS=0, expired session keys only).
 */
import { newId } from "@tasklane/core";
import { pruneCredentials, type Database } from "@tasklane/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { explainNodes, recordingPool, rowsRead } from "../helpers/query-plans.js";
import { seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

/** Live keys beside the spent ones: a scan of the table reads them all. */
const LIVE_KEYS = 5_000;

let tdb: TestDatabase;
let tenantId: string;

beforeAll(async () => {
  tdb = await createTestDatabase("keyprune");
  ({ tenantId } = await seedTenant(tdb.db));
  // Live keys, a third of them console session keys that expire later.
  await tdb.db.pool.query(
    `INSERT INTO api_keys (id, tenant_id, name, prefix, secret_hash, scopes, expires_at)
     SELECT 'key_live' || i, $1, 'live', 'tl_live' || i, md5(i::text), '{full}', CASE WHEN i % 3 = 0 THEN now() + interval '1 hour' END
     FROM generate_series(1, ${LIVE_KEYS}) i`,
    [tenantId],
  );
});

afterAll(async () => {
  await tdb?.drop();
});

/** Three keys revoked long ago and three session keys expired long ago: what one pass prunes. */
async function seedSpentKeys(): Promise<void> {
  for (const [revoked, expires] of [
    ["now() - interval '40 days'", "NULL"],
    ["NULL", "now() - interval '10 days'"],
  ]) {
    for (let i = 0; i < 3; i++) {
      const id = newId("key");
      await tdb.db.pool.query(
        `INSERT INTO api_keys (id, tenant_id, name, prefix, secret_hash, scopes, revoked_at, expires_at)
         VALUES ($1, $2, 'spent', 'tl_' || left(md5($1), 12), md5($1), '{full}', ${revoked}, ${expires})`,
        [id, tenantId],
      );
    }
  }
  await tdb.db.pool.query("ANALYZE api_keys");
}

describe("pruning API keys", () => {
  it.each([
    [30, 6],
    [0, 3],
  ])("with TASK_RETENTION_DAYS=%i prunes its %i keys through the indexes over spent keys, without reading the live ones", async (retentionDays, spent) => {
    await seedSpentKeys();
    // The statement pruneCredentials sends, with its values, as it sends it.
    const recording = recordingPool(tdb.db.pool);
    const { pruned } = await pruneCredentials({ pool: recording } as unknown as Database, retentionDays);
    expect(pruned.apiKeys).toBe(spent);
    const statement = recording.statements.find((s) => s.text.includes("DELETE FROM api_keys"));
    expect(statement).toBeDefined();

    await seedSpentKeys();
    const plan = await explainNodes(tdb.db.pool, statement!.text, statement!.values);
    const indexes = plan.map((n) => n["Index Name"]).filter((name) => name !== undefined);
    expect(indexes).toContain("api_keys_expires_at_idx");
    if (retentionDays > 0) expect(indexes).toContain("api_keys_revoked_at_idx");
    expect(plan.some((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] === "api_keys")).toBe(false);
    // The spent keys, the session keys that expire later (read and dropped by the index's bound
    // only if the planner rechecks) and the DELETE's own probes: far fewer than the live keys.
    expect(rowsRead(plan, "api_keys")).toBeLessThan(100);
    // The live keys are all still there.
    const { rows } = await tdb.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM api_keys WHERE id LIKE 'key_live%'");
    expect(rows[0]!.n).toBe(LIVE_KEYS);
  });
});
