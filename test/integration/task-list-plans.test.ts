/**
 * A page of the task list costs about the same with 100,000 tasks as with a
 * handful: keyset pages over time-ordered ids, filters an index can lead.
 * Checked as work done, not as wall time (a busy 2-core machine makes any
 * time noisy): every statement listTasks runs for a page is EXPLAIN ANALYZEd,
 * and the rows its scans of `tasks` read must stay far below the table's size.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listTasks, type TaskFilter } from "@tasklane/db";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { explainNodes, recordingPool, rowsRead, type PlanNode } from "../helpers/query-plans.js";
import { seedFinishedTasks, seedTenant } from "../helpers/seed.js";

let t: TestDatabase;
let tenantId: string;
let otherTenantId: string;
const TASKS = 100_000;
const OTHER_TASKS = 20_000;

beforeAll(async () => {
  t = await createTestDatabase("listplans");
  const a = await seedTenant(t.db);
  const b = await seedTenant(t.db);
  tenantId = a.tenantId;
  otherTenantId = b.tenantId;
  // Another tenant's tasks (older than A's), with a queue of the same name.
  await seedFinishedTasks(t.db.pool, b.tenantId, b.defaultQueueId, OTHER_TASKS);
  await seedFinishedTasks(t.db.pool, a.tenantId, a.defaultQueueId, TASKS);
  await t.db.pool.query("ANALYZE tasks");
}, 120_000);

afterAll(async () => {
  await t?.drop();
});

/** One page through listTasks, with each statement it ran explained as it ran. */
async function explainPage(filter: TaskFilter, after: string | null = null) {
  const recording = recordingPool(t.db.pool);
  const { statements } = recording;
  const page = await listTasks({ pool: recording as never }, tenantId, filter, { first: 50, after });
  const plans: PlanNode[][] = [];
  for (const { text, values } of statements) plans.push(await explainNodes(t.db.pool, text, values));
  const pageQuery = plans[statements.findIndex((s) => s.text.includes("ORDER BY t.id DESC"))]!;
  expect(pageQuery).toBeDefined();
  const countQuery = plans[statements.findIndex((s) => !s.text.includes("ORDER BY t.id DESC"))]!;
  expect(countQuery).toBeDefined();
  return { page, pageQuery, countQuery };
}

describe("the task list with 100,000 tasks", () => {
  const filters: [string, TaskFilter][] = [
    ["no filter (each status's range, merged by id)", {}],
    ["two statuses", { status: ["CANCELLED", "SUCCEEDED"] }],
    ["status, queue and type (the console's /tasks?status=SUCCEEDED&queue=default&type=bulk-3)", { status: ["SUCCEEDED"], queue: "default", type: "bulk-3" }],
    ["status and a created range (/tasks?status=CANCELLED&range=24h)", { status: ["CANCELLED"], createdAfter: new Date(Date.now() - 24 * 3_600_000) }],
  ];

  it.each(filters)("reads a bounded number of rows for the first page and a deep one: %s", async (_label, filter) => {
    const first = await explainPage(filter);
    expect(first.page.nodes).toHaveLength(50);
    expect(first.page.hasNextPage).toBe(true);
    expect(first.pageQuery.filter((n) => n["Relation Name"] === "tasks" && n["Node Type"] === "Seq Scan")).toEqual([]);
    // A page of 50 with a filter one row in seven matches reads a few hundred rows; a sort or a
    // walk over the table reads tens of thousands.
    expect(rowsRead(first.pageQuery, "tasks")).toBeLessThan(2_000);

    // Deep in the list: a keyset page starts at its cursor, it does not count its way there.
    let cursor = first.page.endCursor;
    for (let hop = 0; hop < 3; hop++) cursor = (await listTasks(t.db, tenantId, filter, { first: 500, after: cursor })).endCursor;
    const deep = await explainPage(filter, cursor);
    expect(deep.page.nodes).toHaveLength(50);
    expect(deep.page.nodes[0]!.id < first.page.nodes[49]!.id).toBe(true);
    expect(rowsRead(deep.pageQuery, "tasks")).toBeLessThan(2_000);
  }, 60_000);

  it("pages through every task of the tenant newest first across statuses, each once", async () => {
    for (const filter of [{}, { status: ["SUCCEEDED", "CANCELLED", "DEAD"] }] as TaskFilter[]) {
      const seen: { id: string; status: string }[] = [];
      let after: string | null = null;
      let pages = 0;
      do {
        const page = await listTasks(t.db, otherTenantId, filter, { first: 1_000, after });
        expect(page.totalCount).toBe(OTHER_TASKS);
        seen.push(...page.nodes.map((n) => ({ id: n.id, status: n.status })));
        after = page.hasNextPage ? page.endCursor : null;
      } while (after !== null && ++pages < 30);
      expect(seen).toHaveLength(OTHER_TASKS);
      expect(seen.every((task, i) => i === 0 || task.id < seen[i - 1]!.id)).toBe(true);
      // The statuses interleave: a page is a merge, not one status after another.
      expect(new Set(seen.slice(0, 20).map((task) => task.status))).toEqual(new Set(["SUCCEEDED", "CANCELLED"]));
    }
  }, 60_000);

  it("counts what the filters match, and only the caller's tasks", async () => {
    const { page } = await explainPage({ status: ["CANCELLED"] });
    expect(page.totalCount).toBe(TASKS / 10);
    expect((await listTasks(t.db, tenantId, {}, { first: 1 })).totalCount).toBe(TASKS);
    expect((await listTasks(t.db, tenantId, { queue: "default", status: ["SUCCEEDED", "DEAD"] }, { first: 1 })).totalCount).toBe(TASKS - TASKS / 10);
    expect((await listTasks(t.db, tenantId, { queue: "no-such-queue" }, { first: 1 })).totalCount).toBe(0);
    // A filter no counter knows is counted from the rows, still exactly: seedFinishedTasks numbers
    // each chunk of 10,000 from 1 and types a task bulk-<number % 7>.
    const bulk3PerChunk = Math.floor((10_000 - 3) / 7) + 1;
    expect((await listTasks(t.db, tenantId, { type: "bulk-3" }, { first: 1 })).totalCount).toBe((TASKS / 10_000) * bulk3PerChunk);
  });

  it.each([
    ["no filter", {}],
    ["a status", { status: ["CANCELLED"] }],
    ["a queue and two statuses", { queue: "default", status: ["SUCCEEDED", "CANCELLED"] }],
  ] as [string, TaskFilter][])("counts from the queue counters, reading no task row: %s", async (_label, filter) => {
    const { page, countQuery } = await explainPage(filter);
    expect(page.totalCount).toBeGreaterThan(0);
    expect(countQuery.filter((n) => n["Relation Name"] === "tasks")).toEqual([]);
    expect(countQuery.some((n) => n["Relation Name"] === "queue_counters")).toBe(true);
  });
});
