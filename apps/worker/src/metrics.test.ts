import { describe, expect, it } from "vitest";
import { createWorkerMetrics } from "./metrics.js";

describe("createWorkerMetrics", () => {
  it("reports every attempt outcome at 0 before any attempt", async () => {
    const text = await createWorkerMetrics().registry.metrics();
    for (const outcome of ["succeeded", "failed", "timed_out", "dead", "stale", "cancelled", "handed_back"]) {
      expect(text).toContain(`tasklane_task_outcomes_total{outcome="${outcome}",app="worker"} 0`);
    }
  });

  it("reads the held outcomes at each scrape", async () => {
    let held = 0;
    const metrics = createWorkerMetrics(() => held);
    expect(await metrics.registry.metrics()).toContain('tasklane_worker_held_outcomes{app="worker"} 0');
    held = 7;
    expect(await metrics.registry.metrics()).toContain('tasklane_worker_held_outcomes{app="worker"} 7');
  });
});
