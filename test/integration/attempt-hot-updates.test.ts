/**
 * Ending an attempt updates its row in place: task_attempts keeps room on its
 * pages (fillfactor 50, migration hot_attempt_updates), so the new version
 * stays on the page of the old one and, as no indexed column changes, the
 * update is HOT (no new index entries). At the default fillfactor nearly every
 * such update moved to another page.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalizeTaskSpec, parseInput, submitTaskInputSchema } from "@tasklane/core";
import { completeLeasedPlainTasks, startAttemptsFromQueue, submitTasks } from "@tasklane/db";
import { seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

let tdb: TestDatabase;
let tenantId: string;
let queueId: string;

beforeAll(async () => {
  tdb = await createTestDatabase("hotatt");
  ({ tenantId, defaultQueueId: queueId } = await seedTenant(tdb.db));
});

afterAll(async () => {
  await tdb?.drop();
});

const spec = () => normalizeTaskSpec(parseInput(submitTaskInputSchema, { type: "hot.test", payload: { n: 1 } }), Date.now());

/** The heap block of each attempt row of these tasks. */
async function attemptBlocks(taskIds: string[]): Promise<Map<string, string>> {
  const res = await tdb.db.pool.query<{ task_id: string; block: string }>(
    "SELECT task_id, (ctid::text::point)[0]::bigint::text AS block FROM task_attempts WHERE task_id = ANY($1::text[])",
    [taskIds],
  );
  return new Map(res.rows.map((r) => [r.task_id, r.block]));
}

describe("task_attempts", () => {
  it("is created with room on its pages", async () => {
    const res = await tdb.db.pool.query<{ options: string[] | null }>("SELECT reloptions AS options FROM pg_class WHERE relname = 'task_attempts'");
    expect(res.rows[0]?.options).toContain("fillfactor=50");
  });

  it("keeps an ended attempt on the page it started on, round after round", async () => {
    let moved = 0;
    let ended = 0;
    // Enough rounds that pages fill up and have to be pruned in place to keep taking updates.
    for (let round = 0; round < 8; round++) {
      await submitTasks(tdb.db, tenantId, Array.from({ length: 300 }, spec), { horizonMs: 0, actor: "test" });
      for (let lease = 0; lease < 3; lease++) {
        const started = await startAttemptsFromQueue(tdb.db, queueId, 100, 60, { workerId: "w", leaseMs: 60_000, actor: "test" });
        expect(started).toHaveLength(100);
        const ids = started.map((s) => s.task.id);
        const before = await attemptBlocks(ids);
        const done = await completeLeasedPlainTasks(tdb.db, tenantId, started.map((s) => ({ taskId: s.task.id, token: s.leaseToken, result: null })), false);
        expect(done.ids).toHaveLength(100);
        const after = await attemptBlocks(ids);
        for (const id of ids) if (after.get(id) !== before.get(id)) moved += 1;
        ended += ids.length;
      }
    }
    const finished = await tdb.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM task_attempts WHERE outcome = 'SUCCEEDED'");
    expect(finished.rows[0]?.n).toBe(ended);
    // 2,400 attempts; at fillfactor 100 nearly all of them moved.
    expect(moved / ended).toBeLessThan(0.1);
  });
});
