/**
 * tasklane_backlog_collected_timestamp_seconds: when the scheduler last
 * computed its backlog gauges. While Postgres is unreachable the gauges keep
 * their last values and this stops moving, which is what the staleness alert
 * watches. Postgres is taken away through a TCP proxy.
 */
import { createDatabase, type Database } from "@tasklane/db";
import type { SchedulerContext } from "@tasklane/scheduler/context";
import { measureQueueDepth } from "@tasklane/scheduler/loops/queue-depth";
import { createSchedulerMetrics } from "@tasklane/scheduler/metrics";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sampleValue } from "../helpers/prometheus-text.js";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

let tdb: TestDatabase;
let proxy: TcpProxy;
let proxied: Database;

beforeAll(async () => {
  tdb = await createTestDatabase("collected");
  proxy = await startTcpProxy("127.0.0.1", Number(new URL(tdb.url).port || 5432));
  proxied = createDatabase({ url: proxy.rewrite(tdb.url), max: 2, applicationName: "backlog-collected-test" });
});

afterAll(async () => {
  await proxied?.close();
  await proxy?.close();
  await tdb?.drop();
});

describe("tasklane_backlog_collected_timestamp_seconds", () => {
  it("is 0 until the gauges are computed, then the time of the last computation, which an outage does not move", async () => {
    const metrics = createSchedulerMetrics(false);
    const ctx = { env: { METRICS_TENANT_LABELS: false }, db: proxied, metrics } as unknown as SchedulerContext;
    const collected = async () => sampleValue(await metrics.registry.metrics(), "tasklane_backlog_collected_timestamp_seconds");
    expect(await collected()).toBe(0);

    const before = Date.now() / 1000;
    await measureQueueDepth(ctx);
    const at = await collected();
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now() / 1000);

    await proxy.cut();
    try {
      await expect(measureQueueDepth(ctx)).rejects.toThrow();
      // The depth is still reported (its last value); only the timestamp tells it is old.
      const text = await metrics.registry.metrics();
      expect(sampleValue(text, "tasklane_queue_depth", { mode: "PUSH", status: "QUEUED" })).toBe(0);
      expect(sampleValue(text, "tasklane_backlog_collected_timestamp_seconds")).toBe(at);
    } finally {
      await proxy.restore();
    }
  });
});
