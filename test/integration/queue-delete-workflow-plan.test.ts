/**
 * deleteQueue's look for a RUNNING workflow holding tasks of the queue reads
 * the queue's own workflow tasks, not every workflow task of the platform: it
 * runs twice per deletion, once under the queue's lock, which submissions to
 * the queue wait for. purgeQueue's look for the queue's BLOCKED tasks reads
 * the queue's workflow tasks, not the tenant's BLOCKED ones. Work is counted
 * in the plan's rows (EXPLAIN ANALYZE), not timed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertQueueDeletable, purgeQueue, type Database, type Queryable } from "@tasklane/db";
import { explainNodes, explainRecorded, recordingDatabase, recordingPool, rowsRead } from "../helpers/query-plans.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase("qdelwf");
});
afterAll(async () => {
  await tdb?.drop();
});

const TASK_COLUMNS = "id, tenant_id, queue_id, type, status, run_at, max_attempts, backoff_strategy, backoff_delay_seconds, backoff_jitter, timeout_seconds, workflow_id, workflow_key, completed_at";

/** A tenant with queues `target` and `busy`; 3,000 RUNNING workflows with 2 tasks each in `busy`, one finished task in `target`. */
async function seed(): Promise<void> {
  await tdb.db.pool.query(`
    INSERT INTO tenants (id, name, signing_secret) VALUES ('ten_wfplan', 'wfplan', 's');
    INSERT INTO queues (id, tenant_id, name, mode) VALUES ('que_target', 'ten_wfplan', 'target', 'PULL'), ('que_busy', 'ten_wfplan', 'busy', 'PULL');
    INSERT INTO workflows (id, tenant_id, name, status) SELECT 'wf_plan' || g, 'ten_wfplan', 'w', 'RUNNING' FROM generate_series(1, 3000) g;
    INSERT INTO tasks (${TASK_COLUMNS})
      SELECT 'task_wf' || g || '_' || k, 'ten_wfplan', 'que_busy', 't', (CASE WHEN k = 1 THEN 'SUCCEEDED' ELSE 'BLOCKED' END)::"TaskStatus", now(),
        3, 'EXPONENTIAL', 1, false, 30, 'wf_plan' || g, 'k' || k, CASE WHEN k = 1 THEN now() END
      FROM generate_series(1, 3000) g, generate_series(1, 2) k;
    INSERT INTO tasks (${TASK_COLUMNS})
      VALUES ('task_target', 'ten_wfplan', 'que_target', 't', 'SUCCEEDED', now(), 3, 'EXPONENTIAL', 1, false, 30, NULL, NULL, now());
    ANALYZE tasks; ANALYZE workflows;`);
}

/** Rows the deletability checks read from tasks and workflows, each statement explained with ANALYZE. */
async function checkWork(queue: { id: string; name: string }): Promise<number> {
  const recorder = recordingPool(tdb.db.pool);
  await assertQueueDeletable(recorder as unknown as Queryable, "ten_wfplan", queue);
  let rows = 0;
  for (const s of recorder.statements) {
    const plan = await explainNodes(tdb.db.pool, s.text, s.values);
    rows += rowsRead(plan, "tasks") + rowsRead(plan, "workflows");
  }
  return rows;
}

beforeAll(seed);

describe("purgeQueue's look for BLOCKED workflow tasks", () => {
  it("reads the queue's workflow tasks, not every BLOCKED task of the tenant", async () => {
    const { db, statements } = recordingDatabase(tdb.db.pool);
    const result = await purgeQueue(db as unknown as Database, "ten_wfplan", "que_target", { actor: "test", horizonMs: 300_000 });
    expect(result).toMatchObject({ cancelled: 0, blocked: 0 });
    const blockedLooks = statements.filter((s) => s.text.includes("status = 'BLOCKED' AND t.queue_id"));
    expect(blockedLooks).toHaveLength(1);
    // Without 'workflow_id IS NOT NULL' (the tenant's 3,000 BLOCKED tasks elsewhere): 'expected 3000 to be less than 100'.
    expect(rowsRead(await explainRecorded(tdb.db.pool, blockedLooks[0]!, { analyze: true }), "tasks")).toBeLessThan(100);
  });
});

describe("deleteQueue's running-workflow check", () => {
  it("reads the queue's own workflow tasks, not the platform's", async () => {
    // Without tasks_queue_workflow_idx and the probe from the queue's side: 'expected 6001 to be less than 100'.
    expect(await checkWork({ id: "que_target", name: "target" })).toBeLessThan(100);
  });

  it("still refuses a queue holding a running workflow's task", async () => {
    // A finished task of a running workflow, alone in its queue, is enough.
    await tdb.db.pool.query("UPDATE tasks SET queue_id = 'que_target' WHERE id = 'task_wf2999_1'");
    await expect(assertQueueDeletable(tdb.db.pool, "ten_wfplan", { id: "que_target", name: "target" })).rejects.toThrow(/workflow wf_plan2999/);
    await tdb.db.pool.query("UPDATE workflows SET status = 'SUCCEEDED', completed_at = now() WHERE id = 'wf_plan2999'");
    await expect(assertQueueDeletable(tdb.db.pool, "ten_wfplan", { id: "que_target", name: "target" })).resolves.toBeUndefined();
  });
});
