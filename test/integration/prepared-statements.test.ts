/**
 * The hot path's statements are named prepared statements (database.ts,
 * prepared): each connection parses them once, and after a few executions
 * Postgres's plan cache settles on a generic plan, so a lease or completion
 * no longer pays for planning every time. Checked on a real connection
 * through pg_prepared_statements, and the plan it settles on through EXPLAIN.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDatabase, leaseFromPullQueue, prepared, startAttemptsByIds, submitTasks, type Database } from "@tasklane/db";
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

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  Plans?: PlanNode[];
}

function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

describe("the PUSH start statement's cached plan", () => {
  it("still probes tasks by primary key after the table has grown 17-fold since it was cached", async () => {
    const { tenantId } = await seedTenant(t.db);
    const spec = normalizeTaskSpec(parseInput(submitTaskInputSchema, { type: "t" }), Date.now() - 1_000);
    const small = (await submitTasks(t.db, tenantId, Array.from({ length: 240 }, () => spec), { horizonMs: 60_000 })).tasks;
    // Cached while the table holds a few hundred rows, as on a fresh install.
    for (let i = 0; i < 6; i++) {
      const ids = small.slice(i * 40, (i + 1) * 40).map((task) => task.id);
      expect(await startAttemptsByIds(single, ids, { workerId: "w", leaseMs: 30_000, actor: "test" })).toHaveLength(40);
    }
    const start = (await preparedStatements()).filter((s) => s.statement.includes("OFFSET 0 FOR UPDATE"));
    expect(start).toHaveLength(1);
    expect(Number(start[0]!.generic_plans)).toBeGreaterThan(0);

    const grown: string[] = [];
    for (let i = 0; i < 8; i++) {
      const batch = await submitTasks(t.db, tenantId, Array.from({ length: 500 }, () => spec), { horizonMs: 60_000 });
      grown.push(...batch.tasks.map((task) => task.id));
    }
    const ids = grown.slice(0, 50).sort();
    // EXECUTE takes no bind parameters: the ids (our own, task_ and hex) go in as literals.
    expect(ids.every((id) => /^task_[0-9a-f]+$/.test(id))).toBe(true);
    const list = (values: string[]) => `ARRAY[${values.map((v) => `'${v}'`).join(",")}]::text[]`;
    const explained = await single.pool.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
      `EXPLAIN (FORMAT JSON) EXECUTE ${start[0]!.name}(${list(ids)}, ${list(ids.map(() => "r"))}, 0, 30000, 'w', 'test')`,
    );
    const nodes = planNodes(explained.rows[0]!["QUERY PLAN"][0].Plan);
    const onTasks = nodes.filter((n) => n["Relation Name"] === "tasks" && n["Node Type"].endsWith("Scan"));
    // The lock probe and the update: one index probe per id each, never a walk over the table.
    expect(onTasks.length).toBeGreaterThanOrEqual(2);
    expect(onTasks.filter((n) => !n["Node Type"].startsWith("Index"))).toEqual([]);
    expect(onTasks.map((n) => n["Index Name"])).not.toContain("tasks_runnable_lane_idx");
    expect(onTasks.filter((n) => n["Index Name"] === "tasks_pkey").length).toBeGreaterThanOrEqual(2);
  });
});
