/**
 * A webhook event tells the task as its transition left it, even when the
 * task moved on before the notifier fanned the event out: a DEAD task
 * redriven and run to success at once used to be announced as task.dead with
 * status SUCCEEDED and the later attempt's result.
 */
import { completeAttempts, fanOutNotifications, redriveTask, startAttemptsFromQueue } from "@tasklane/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { addWebhook, finishTask, seedNotifierTenant } from "./notifier-harness.js";

let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase("notify_snapshot");
});

afterAll(async () => {
  await tdb?.drop();
});

describe("a terminal event's envelope", () => {
  it("carries the task as it ended, not as it is when the event is fanned out", async () => {
    const t = await seedNotifierTenant(tdb.db);
    await addWebhook(tdb.db, t.tenantId, "http://127.0.0.1:9/hook", ["*"]);
    const taskId = await finishTask(tdb.db, t, "dead");
    const died = (await tdb.db.pool.query("SELECT completed_at FROM tasks WHERE id = $1", [taskId])).rows[0] as { completed_at: Date };

    await redriveTask(tdb.db, t.tenantId, taskId, "test", 0);
    const [again] = await startAttemptsFromQueue(tdb.db, t.queueId, 1, 60, { workerId: "test", leaseMs: 30_000, actor: "test" });
    expect(again?.task.id).toBe(taskId);
    await completeAttempts(tdb.db, [{ taskId, leaseGeneration: again!.task.leaseGeneration, result: { rows: 9 } }], "test");

    expect(await fanOutNotifications(tdb.db)).toEqual({ events: 2, deliveries: 2, more: false });
    const bodies = (
      await tdb.db.pool.query<{ event: string; body: string }>("SELECT event, body FROM webhook_deliveries WHERE task_id = $1 ORDER BY id", [taskId])
    ).rows.map((r) => ({ event: r.event, task: (JSON.parse(r.body) as { data: { task: Record<string, unknown> } }).data.task }));

    expect(bodies.map((b) => b.event)).toEqual(["task.dead", "task.succeeded"]);
    expect(bodies[0]!.task).toMatchObject({ status: "DEAD", attempts: 1, result: null, lastError: "boom", completedAt: died.completed_at.toISOString() });
    expect(bodies[1]!.task).toMatchObject({ status: "SUCCEEDED", attempts: 1, result: { rows: 9 } });
    expect(bodies[1]!.task.completedAt).not.toBe(bodies[0]!.task.completedAt);
  });
});
