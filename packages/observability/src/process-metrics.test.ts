import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { collectProcessMetrics } from "./process-metrics.js";

describe("collectProcessMetrics", () => {
  it("registers Node's process metrics, event-loop lag included, on the given registry only", async () => {
    const registry = new Registry();
    collectProcessMetrics(registry);
    await new Promise((resolve) => setTimeout(resolve, 120));
    const text = await registry.metrics();
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \d/m);
    expect(text).toMatch(/^process_cpu_seconds_total \d/m);
    expect((await new Registry().metrics()).trim()).toBe("");
  });
});
