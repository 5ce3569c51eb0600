import { describe, expect, it } from "vitest";
import { isOmittedParentResult } from "./parent-results.js";

describe("isOmittedParentResult", () => {
  it("tells the marker of a parent's result left out of the lease from results, whatever they hold", () => {
    // As the lease carries it past MAX_INLINE_PARENT_RESULTS_BYTES (packages/db start-attempts.ts).
    expect(isOmittedParentResult({ resultOmitted: true, taskId: "task_0190a0a0a0a07000800000000000000a", resultBytes: 262_146 })).toBe(true);
    for (const result of [null, undefined, 0, "x", [], {}, { resultOmitted: false, taskId: "t", resultBytes: 1 }, { resultOmitted: true }, { resultOmitted: "true", taskId: "t", resultBytes: 1 }]) {
      expect(isOmittedParentResult(result)).toBe(false);
    }
  });
});
