import { describe, expect, it } from "vitest";
import { TenantWalk } from "./tenant-walk.js";

describe("TenantWalk", () => {
  it("walks on at once through limit - 1 empty windows in a row, then waits and counts again", () => {
    const walk = new TenantWalk(3);
    expect([walk.walked("t1", true), walk.walked("t2", true), walk.walked("t3", true), walk.walked("t4", true)]).toEqual([true, true, false, true]);
    expect(walk.after).toBe("t4");
  });

  it("starts the count again after a window that took something or reached the last tenant, and keeps its place when not told one", () => {
    const walk = new TenantWalk(2);
    expect(walk.walked("a", true)).toBe(true);
    expect(walk.walked("b", false)).toBe(false);
    expect(walk.walked(undefined, true)).toBe(true);
    expect(walk.after).toBe("b");
  });

  it("refuses a limit that makes no sense", () => {
    expect(() => new TenantWalk(0)).toThrow(RangeError);
  });
});
