import { describe, expect, it } from "vitest";
import { createMetrics } from "./metrics.js";

describe("notifier createMetrics", () => {
  it("reports every delivery outcome at 0 before any delivery", async () => {
    const text = await createMetrics(() => 0).registry.metrics();
    for (const outcome of ["delivered", "retry", "exhausted", "gone", "abandoned", "stale", "unrecorded"]) {
      expect(text).toContain(`tasklane_notifier_deliveries_total{outcome="${outcome}",app="notifier"} 0`);
    }
  });
});
