import { describe, expect, it } from "vitest";
import { MAX_TIMEOUT_SECONDS } from "@tasklane/core";
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

  it("has execution buckets up to the longest task timeout, so a p99 of long requests is not read as a shorter bucket", async () => {
    const metrics = createWorkerMetrics();
    metrics.execution.observe(2 * 3_600);
    const text = await metrics.registry.metrics();
    const bounds = [...text.matchAll(/^tasklane_task_execution_seconds_bucket\{le="([0-9.e+]+)"/gm)].map((m) => Number(m[1]));
    expect(Math.max(...bounds)).toBe(MAX_TIMEOUT_SECONDS);
    // A two-hour request lands in a finite bucket above two hours.
    const above = bounds.filter((b) => b >= 2 * 3_600);
    expect(above.length).toBeGreaterThan(0);
  });
});
