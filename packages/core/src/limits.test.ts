import { describe, expect, it } from "vitest";
import { defaultBurst, startRateOf } from "./limits.js";

describe("start rates", () => {
  it("default the burst to one second's worth, never less than 1", () => {
    expect(defaultBurst(10)).toBe(10);
    expect(defaultBurst(2.5)).toBe(3);
    expect(defaultBurst(0.2)).toBe(1);
  });

  it("read a queue's stored columns: none without a rate, the stored burst when there is one", () => {
    expect(startRateOf(null, 5)).toBeNull();
    expect(startRateOf(undefined, undefined)).toBeNull();
    expect(startRateOf(4, null)).toEqual({ perSecond: 4, burst: 4 });
    expect(startRateOf(4, 9)).toEqual({ perSecond: 4, burst: 9 });
  });
});
