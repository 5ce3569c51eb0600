import { describe, expect, it } from "vitest";
import { ApiTokenAllotments } from "./api-token-allotments.js";

const LIMITS = { ratePerSecond: 200, burst: 400 };

describe("ApiTokenAllotments", () => {
  it("gives small limits no allotment and larger ones a twentieth of a second of rate, at most a quarter of the burst", () => {
    expect(ApiTokenAllotments.extraFor({ ratePerSecond: 1, burst: 20 })).toBe(0);
    expect(ApiTokenAllotments.extraFor({ ratePerSecond: 19, burst: 400 })).toBe(0);
    expect(ApiTokenAllotments.extraFor(LIMITS)).toBe(10);
    expect(ApiTokenAllotments.extraFor({ ratePerSecond: 1000, burst: 8 })).toBe(2);
  });

  it("admits calls from what it keeps until that runs short, then hands over what is left", () => {
    const allotments = new ApiTokenAllotments(() => 0);
    expect(allotments.take("t1", LIMITS, 1)).toEqual({ admitted: false, held: 0 });
    allotments.keep("t1", LIMITS, 5);
    expect(allotments.take("t1", LIMITS, 2)).toEqual({ admitted: true });
    expect(allotments.take("t1", LIMITS, 2)).toEqual({ admitted: true });
    expect(allotments.take("t2", LIMITS, 1)).toEqual({ admitted: false, held: 0 });
    expect(allotments.take("t1", LIMITS, 2)).toEqual({ admitted: false, held: 1 });
    // Handed over: nothing is held twice.
    expect(allotments.take("t1", LIMITS, 1)).toEqual({ admitted: false, held: 0 });
  });

  it("drops an allotment after a second, or once the tenant's limits change", () => {
    let now = 0;
    const allotments = new ApiTokenAllotments(() => now);
    allotments.keep("t1", LIMITS, 5);
    now = 999;
    expect(allotments.take("t1", LIMITS, 1)).toEqual({ admitted: true });
    now = 1_000;
    expect(allotments.take("t1", LIMITS, 1)).toEqual({ admitted: false, held: 0 });
    allotments.keep("t1", LIMITS, 5);
    expect(allotments.take("t1", { ...LIMITS, ratePerSecond: 100 }, 1)).toEqual({ admitted: false, held: 0 });
    expect(allotments.take("t1", LIMITS, 1)).toEqual({ admitted: false, held: 0 });
  });

  it("adds tokens kept under the same limits to what is held, and keeps nothing for zero", () => {
    const allotments = new ApiTokenAllotments(() => 0);
    allotments.keep("t1", LIMITS, 0);
    expect(allotments.take("t1", LIMITS, 1)).toEqual({ admitted: false, held: 0 });
    allotments.keep("t1", LIMITS, 2);
    allotments.keep("t1", LIMITS, 3);
    expect(allotments.take("t1", LIMITS, 5)).toEqual({ admitted: true });
    expect(allotments.take("t1", LIMITS, 1)).toEqual({ admitted: false, held: 0 });
  });
});
