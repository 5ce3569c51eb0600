/**
 * The hot path's statements are named prepared statements (database.ts,
 * prepared): each connection parses them once, and after a few executions
 * Postgres's plan cache settles on a generic plan, so a lease or completion
 * no longer pays for planning every time. Checked on a real connection
 * through pg_prepared_statements.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDatabase, leaseFromPullQueue, prepared, submitTasks, type Database } from "@tasklane/db";
import { normalizeTaskSpec, parseInput, submitTaskInputSchema } from "@tasklane/core";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { seedTenant } from "../helpers/seed.js";

let t: TestDatabase;
/** One connection, so every statement below runs in the session it inspects. */
let single: Database;

beforeAll(async () => {
  t = await createTestDatabase("prep");
  single = createDatabase({ url: t.url, max: 1, applicationName: "tasklane-test" });
});

afterAll(async () => {
  await single?.close();
  await t?.drop();
});

interface PreparedRow {
  name: string;
  statement: string;
  generic_plans: string;
  custom_plans: string;
}

const preparedStatements = async () => (await single.pool.query<PreparedRow>("SELECT name, statement, generic_plans, custom_plans FROM pg_prepared_statements")).rows;

describe("prepared", () => {
  it("names a text by its digest: the same text the same name, another text another", () => {
    const a = prepared("SELECT $1::int", [1]);
    expect(a).toEqual({ name: expect.stringMatching(/^tl_[0-9a-f]{24}$/), text: "SELECT $1::int", values: [1] });
    expect(prepared("SELECT $1::int", [2]).name).toBe(a.name);
    expect(prepared("SELECT $1::int + 1", [2]).name).not.toBe(a.name);
  });

  it("lets a connection prepare a lease statement once and then reuse a generic plan", async () => {
    const { tenantId } = await seedTenant(t.db);
    const spec = normalizeTaskSpec(parseInput(submitTaskInputSchema, { type: "t" }), Date.now());
    await submitTasks(t.db, tenantId, Array.from({ length: 12 }, () => spec), { horizonMs: 60_000 });
    for (let i = 0; i < 12; i++) {
      const leased = await leaseFromPullQueue(single, tenantId, { queue: "default", workerId: "w", max: 1, leaseSeconds: 30, agingSeconds: 60 });
      expect(leased).toHaveLength(1);
    }
    const lease = (await preparedStatements()).filter((s) => s.statement.includes("lease_expires_at") && s.statement.includes("row_number() OVER ()"));
    expect(lease).toHaveLength(1);
    // The plan cache tries five custom plans before it compares them with a generic one.
    expect(Number(lease[0]!.generic_plans)).toBeGreaterThan(0);
    expect(Number(lease[0]!.generic_plans) + Number(lease[0]!.custom_plans)).toBe(12);
  });
});
