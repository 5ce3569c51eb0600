/**
 * The notifier's fan-out takes NOTIFY events a few megabytes of task bodies
 * at a time (FAN_OUT_BODY_BYTES) and inserts deliveries in runs of that size:
 * 200 events of tasks with 240 KiB payloads and results for 3 webhooks ran
 * it out of the heap a 1 GiB container gives it, again after every restart.
 * The payloads here compress to almost nothing in Postgres: the bound is on
 * their JSON text.
 */
import { FAN_OUT_BODY_BYTES, completeAttempts, fanOutNotifications, startAttemptsFromQueue, submitTasks } from "@tasklane/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";
import { addWebhook, seedNotifierTenant, taskSpec } from "./notifier-harness.js";

const TASKS = 30;
const BLOB = "x".repeat(200 * 1024);

let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase("fanout_bytes");
});

afterAll(async () => {
  await tdb?.drop();
});

describe("fan-out bounded in bytes", () => {
  it("takes the events a few MB of bodies at a time, says there is more, and makes every delivery once", async () => {
    const t = await seedNotifierTenant(tdb.db);
    await addWebhook(tdb.db, t.tenantId, "http://127.0.0.1:9/a", ["*"]);
    await addWebhook(tdb.db, t.tenantId, "http://127.0.0.1:9/b", ["*"]);
    await submitTasks(tdb.db, t.tenantId, Array.from({ length: TASKS }, (_, n) => taskSpec({ type: "big", payload: { n, blob: BLOB } })), { horizonMs: 0, actor: "test" });
    // A lease stops once its payloads pass 4 MiB (start-attempts.ts): lease until all are started.
    const started: Awaited<ReturnType<typeof startAttemptsFromQueue>> = [];
    for (let i = 0; i < 10 && started.length < TASKS; i++) {
      started.push(...(await startAttemptsFromQueue(tdb.db, t.queueId, TASKS, 60, { workerId: "test", leaseMs: 60_000, actor: "test" })));
    }
    expect(started).toHaveLength(TASKS);
    await completeAttempts(tdb.db, started.map((s) => ({ taskId: s.task.id, leaseGeneration: s.task.leaseGeneration, result: { blob: BLOB } })), "test");

    // Each event carries ~400 KiB of payload and result: 4 MiB holds 10 of them.
    const perClaim = Math.floor(FAN_OUT_BODY_BYTES / (2 * BLOB.length));
    const rounds: Array<{ events: number; deliveries: number; more: boolean }> = [];
    for (let i = 0; i < 20; i++) {
      const round = await fanOutNotifications(tdb.db);
      if (round.events === 0) break;
      rounds.push(round);
    }
    expect(rounds.length).toBeGreaterThanOrEqual(Math.ceil(TASKS / perClaim));
    for (const round of rounds) {
      expect(round.events).toBeLessThanOrEqual(perClaim);
      expect(round.deliveries).toBe(2 * round.events);
    }
    expect(rounds.slice(0, -1).every((r) => r.more)).toBe(true);
    expect(rounds.at(-1)?.more).toBe(false);

    const { rows } = await tdb.db.pool.query<{ task_id: string; n: number; body: string }>(
      "SELECT task_id, count(*)::int AS n, min(body) AS body FROM webhook_deliveries GROUP BY task_id",
    );
    expect(rows).toHaveLength(TASKS);
    expect(rows.every((r) => r.n === 2)).toBe(true);
    const task = (JSON.parse(rows[0]!.body) as { data: { task: { payload: { blob: string }; result: { blob: string } } } }).data.task;
    expect(task.payload.blob).toBe(BLOB);
    expect(task.result.blob).toBe(BLOB);
  });
});
