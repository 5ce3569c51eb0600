/**
 * A submission answering only task refs (submitTaskRefs: id, queue, status)
 * writes exactly what a whole-task submission writes and answers the same
 * tasks: input order, idempotent repeats resolved to the first task, dispatch
 * intents for PUSH tasks, on both the one-statement path (no quotas) and the
 * transaction path (quotas to check).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalizeTaskSpec, parseInput, submitTaskInputSchema, type SubmitTaskInput } from "@tasklane/core";
import { submitTaskRefs, submitTasks, type Database } from "@tasklane/db";
import { seedPushQueue, seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

const HORIZON = 60_000;
let tdb: TestDatabase;
let db: Database;

beforeAll(async () => {
  tdb = await createTestDatabase("refs");
  db = tdb.db;
});
afterAll(async () => tdb?.drop());

const spec = (input: Partial<SubmitTaskInput> & { type: string }) => normalizeTaskSpec(parseInput(submitTaskInputSchema, input), Date.now());

/** A tenant with a PUSH queue "hook"; with `quotas`, a pending cap (so submissions take the transaction path). */
async function tenant(quotas: boolean) {
  const seeded = await seedTenant(db);
  await db.pool.query("UPDATE tenants SET max_pending_tasks = $2 WHERE id = $1", [seeded.tenantId, quotas ? 1_000 : null]);
  const hookId = await seedPushQueue(db, seeded.tenantId, "hook", "http://127.0.0.1:9/hook");
  return { ...seeded, hookId };
}

describe.each([
  ["without quotas (one statement)", false],
  ["with quotas (transaction)", true],
])("submitTaskRefs %s", (_label, quotas) => {
  it("answers the tasks a whole-task submission would, in input order, repeats resolved to the first task", async () => {
    const { tenantId, defaultQueueId, hookId } = await tenant(quotas);
    const [first] = (await submitTasks(db, tenantId, [spec({ type: "first", idempotencyKey: "k1" })], { horizonMs: HORIZON })).tasks;
    const later = new Date(Date.now() + 3_600_000);
    const { tasks: refs, dispatch } = await submitTaskRefs(
      db,
      tenantId,
      [
        spec({ type: "plain" }),
        spec({ type: "again", idempotencyKey: "k1" }),
        spec({ type: "pushed", queue: "hook" }),
        spec({ type: "twin-a", idempotencyKey: "k2" }),
        spec({ type: "twin-b", idempotencyKey: "k2" }),
        spec({ type: "later", runAt: later }),
      ],
      { horizonMs: HORIZON },
    );
    expect(refs).toHaveLength(6);
    expect(refs[1]).toEqual({ id: first?.id, queueId: defaultQueueId, status: "QUEUED" });
    expect(refs[4]?.id).toBe(refs[3]?.id);
    expect(new Set(refs.map((r) => r.id)).size).toBe(5);

    const stored = await db.pool.query<{ id: string; type: string; queue_id: string; status: string }>(
      "SELECT id, type, queue_id, status FROM tasks WHERE id = ANY($1::text[])",
      [refs.map((r) => r.id)],
    );
    const byId = new Map(stored.rows.map((r) => [r.id, r]));
    expect(refs.map((r) => byId.get(r.id)?.type)).toEqual(["plain", "first", "pushed", "twin-a", "twin-a", "later"]);
    for (const ref of refs) expect(ref).toEqual({ id: ref.id, queueId: byId.get(ref.id)?.queue_id, status: byId.get(ref.id)?.status });
    expect(refs.map((r) => r.status)).toEqual(["QUEUED", "QUEUED", "QUEUED", "QUEUED", "QUEUED", "SCHEDULED"]);

    // Only the new PUSH task due within the horizon goes to Redis, with what the dispatcher needs.
    expect(dispatch).toHaveLength(1);
    expect(dispatch[0]).toMatchObject({ taskId: refs[2]?.id, tenantId, queueId: hookId, priority: "NORMAL", dispatchGeneration: 1 });
    expect(dispatch[0]?.runAt).toBeInstanceOf(Date);
    expect(dispatch[0]?.outboxId).toEqual(expect.any(String));
    const outbox = await db.pool.query<{ task_ids: string[] }>("SELECT task_ids FROM outbox WHERE id = $1", [dispatch[0]?.outboxId]);
    expect(outbox.rows[0]?.task_ids).toEqual([refs[2]?.id]);
  });
});
