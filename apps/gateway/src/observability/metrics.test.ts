import { describe, expect, it } from "vitest";
import { createMetrics } from "./metrics.js";

describe("gateway createMetrics", () => {
  it("reports the API rate limit's refusals at 0 before any", async () => {
    const text = await createMetrics().registry.metrics();
    expect(text).toContain('tasklane_rate_limited_total{kind="api",app="gateway"} 0');
  });
});
