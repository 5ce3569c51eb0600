/**
 * The scheduler's backlog gauges leave out what paused queues hold waiting:
 * tasklane_queue_depth drives the workers' autoscaling (docs/operations.md),
 * and a paused queue's QUEUED tasks cannot start. Its RUNNING tasks still
 * hold worker slots and stay counted.
 */
import { normalizeTaskSpec, parseInput, submitTaskInputSchema } from "@tasklane/core";
import { submitTasks } from "@tasklane/db";
import type { SchedulerContext } from "@tasklane/scheduler/context";
import { measureQueueDepth } from "@tasklane/scheduler/loops/queue-depth";
import { createSchedulerMetrics } from "@tasklane/scheduler/metrics";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sampleValue } from "../helpers/prometheus-text.js";
import { seedPushQueue, seedTenant } from "../helpers/seed.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

let tdb: TestDatabase;
let tenantId: string;

beforeAll(async () => {
  tdb = await createTestDatabase("depth");
  ({ tenantId } = await seedTenant(tdb.db));
});

afterAll(async () => {
  await tdb?.drop();
});

async function submit(queue: string, count: number): Promise<string[]> {
  const specs = Array.from({ length: count }, () => normalizeTaskSpec(parseInput(submitTaskInputSchema, { queue, type: "t" }), Date.now()));
  const { tasks } = await submitTasks(tdb.db, tenantId, specs, { horizonMs: 300_000 });
  return tasks.map((t) => t.id);
}

describe("tasklane_queue_depth", () => {
  it("counts a paused queue's running tasks but not its waiting ones", async () => {
    await seedPushQueue(tdb.db, tenantId, "live", "http://127.0.0.1:9/live");
    const pausedId = await seedPushQueue(tdb.db, tenantId, "held", "http://127.0.0.1:9/held");
    await submit("live", 2);
    const held = await submit("held", 3);
    // One of the paused queue's tasks was already running when the queue was paused.
    await tdb.db.pool.query("UPDATE tasks SET status = 'RUNNING', started_at = now(), attempts = 1 WHERE id = $1", [held[0]]);
    await tdb.db.pool.query("UPDATE queues SET paused = true WHERE id = $1", [pausedId]);

    const metrics = createSchedulerMetrics(false);
    const ctx = { env: { METRICS_TENANT_LABELS: false }, db: tdb.db, metrics } as unknown as SchedulerContext;
    await measureQueueDepth(ctx);
    const text = await metrics.registry.metrics();
    expect(sampleValue(text, "tasklane_queue_depth", { mode: "PUSH", status: "QUEUED" })).toBe(2);
    expect(sampleValue(text, "tasklane_queue_depth", { mode: "PUSH", status: "RUNNING" })).toBe(1);

    // Resumed, its waiting tasks count again.
    await tdb.db.pool.query("UPDATE queues SET paused = false WHERE id = $1", [pausedId]);
    await measureQueueDepth(ctx);
    expect(sampleValue(await metrics.registry.metrics(), "tasklane_queue_depth", { mode: "PUSH", status: "QUEUED" })).toBe(4);
  });
});
