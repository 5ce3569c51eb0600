import { describe, expect, it } from "vitest";
import { createSchedulerMetrics } from "./metrics.js";

describe("createSchedulerMetrics", () => {
  it("reports every retention table and reconciler reason at 0 before anything is counted", async () => {
    const text = await createSchedulerMetrics(false).registry.metrics();
    for (const table of ["tasks", "attempts", "events", "workflows", "deliveries", "tenant_daily_usage", "api_keys", "webhooks"]) {
      expect(text).toContain(`tasklane_retention_pruned_rows_total{table="${table}",app="scheduler"} 0`);
    }
    for (const reason of ["rebuild", "sweep"]) expect(text).toContain(`tasklane_reconciler_readded_total{reason="${reason}",app="scheduler"} 0`);
  });
});
