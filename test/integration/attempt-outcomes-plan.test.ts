/**
 * The console's activity charts count attempt outcomes from the audit trail
 * (countAttemptOutcomes). Their index holds only the outcome events (partial,
 * migration task_event_outcome_index), so a task's submission and start events
 * cost no entry in it; this checks that the query still reads through that
 * index, and only the outcome rows: a change to either predicate would
 * silently turn the read into a walk over every event of the window.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countAttemptOutcomes, type Queryable } from "@tasklane/db";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { explainNodes, recordingPool, rowsRead } from "../helpers/query-plans.js";
import { seedFinishedTasks, seedTenant } from "../helpers/seed.js";

let t: TestDatabase;
let tenantA: string;
let tenantB: string;
const A_TASKS = 3_000;
const B_TASKS = 20_000;
const A_RETRIES = 100;

/**
 * The audit trail of each seeded task, written the last half hour: created,
 * started and finished (SUCCEEDED), or created and cancelled while queued.
 */
async function seedEvents(pool: Queryable, tenantId: string): Promise<void> {
  await pool.query(
    `INSERT INTO task_events (task_id, tenant_id, from_status, to_status, at, attempt, lease_generation, actor)
     SELECT t.id, t.tenant_id, e.from_status, e.to_status, now() - interval '30 minutes' + e.step * interval '1 second', 1, 1, 'seed'
       FROM tasks t
       CROSS JOIN LATERAL (VALUES
         (0, NULL::"TaskStatus", 'QUEUED'::"TaskStatus"),
         (1, 'QUEUED', CASE WHEN t.status = 'SUCCEEDED' THEN 'RUNNING'::"TaskStatus" ELSE 'CANCELLED' END),
         (2, 'RUNNING', 'SUCCEEDED')) AS e(step, from_status, to_status)
      WHERE t.tenant_id = $1 AND (e.step < 2 OR t.status = 'SUCCEEDED')`,
    [tenantId],
  );
}

beforeAll(async () => {
  t = await createTestDatabase("outcomes");
  const a = await seedTenant(t.db);
  const b = await seedTenant(t.db);
  tenantA = a.tenantId;
  tenantB = b.tenantId;
  await seedFinishedTasks(t.db.pool, tenantA, a.defaultQueueId, A_TASKS);
  await seedFinishedTasks(t.db.pool, tenantB, b.defaultQueueId, B_TASKS);
  await seedEvents(t.db.pool, tenantA);
  await seedEvents(t.db.pool, tenantB);
  // A failed attempt of some of A's tasks (RUNNING -> RETRYING): an outcome that counts as failed.
  await t.db.pool.query(
    `INSERT INTO task_events (task_id, tenant_id, from_status, to_status, at, attempt, lease_generation, actor)
     SELECT id, tenant_id, 'RUNNING', 'RETRYING', now() - interval '10 minutes', 1, 1, 'seed' FROM tasks
      WHERE tenant_id = $1 AND status = 'SUCCEEDED' ORDER BY id LIMIT $2`,
    [tenantA, A_RETRIES],
  );
  await t.db.pool.query("ANALYZE task_events");
  await t.db.pool.query("ANALYZE tasks");
}, 120_000);

afterAll(async () => {
  await t?.drop();
});

describe("countAttemptOutcomes (the console's activity charts)", () => {
  it("counts only its tenant's outcome events, reading them through the outcome index and nothing else of task_events", async () => {
    const recording = recordingPool(t.db.pool);
    const since = new Date(Date.now() - 3_600_000);
    const rows = await countAttemptOutcomes(recording as never, tenantA, since, 3_600_000);

    const succeededOfA = A_TASKS * 0.9;
    expect(rows).toEqual([{ queue: "default", bucket: 0, succeeded: succeededOfA, failed: A_RETRIES }]);

    expect(recording.statements).toHaveLength(1);
    const { text, values } = recording.statements[0]!;
    const nodes = await explainNodes(t.db.pool, text, values);
    // An index scan names the index itself; a bitmap heap scan has it on its bitmap index scan child.
    expect(nodes.filter((n) => n["Index Name"]?.startsWith("task_events")).map((n) => n["Index Name"])).toEqual(["task_events_outcome_at_idx"]);
    expect(nodes.filter((n) => n["Relation Name"] === "task_events")).toHaveLength(1);
    // Every row the scan read was one of A's outcomes: none dropped by a filter.
    expect(rowsRead(nodes, "task_events")).toBe(succeededOfA + A_RETRIES);
  });

  it("leaves out another tenant's outcomes and those before the window", async () => {
    const rowsOfB = await countAttemptOutcomes(t.db.pool, tenantB, new Date(Date.now() - 3_600_000), 3_600_000);
    expect(rowsOfB).toEqual([{ queue: "default", bucket: 0, succeeded: B_TASKS * 0.9, failed: 0 }]);
    expect(await countAttemptOutcomes(t.db.pool, tenantA, new Date(Date.now() - 60_000), 60_000)).toEqual([]);
  });
});
