import { describe, expect, it } from "vitest";
import { OverlapPolicy } from "../statuses.js";
import { decideOverlap } from "./overlap.js";

describe("decideOverlap", () => {
  it.each(Object.values(OverlapPolicy))("%s: starts when nothing is running", (policy) => {
    expect(decideOverlap(policy, false)).toBe("start");
  });

  it.each([
    [OverlapPolicy.ALLOW, "start"],
    [OverlapPolicy.SKIP, "skip"],
    [OverlapPolicy.QUEUE, "queue"],
    [OverlapPolicy.CANCEL_RUNNING, "cancel_previous_then_start"],
  ] as const)("%s with an unfinished previous run: %s", (policy, decision) => {
    expect(decideOverlap(policy, true)).toBe(decision);
  });

  it("throws on a value outside the enum (data from a newer peer)", () => {
    expect(() => decideOverlap("PARALLEL" as OverlapPolicy, true)).toThrow(/Unexpected value/);
  });
});
