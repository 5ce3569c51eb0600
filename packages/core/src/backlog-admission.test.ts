import { describe, expect, it } from "vitest";
import { admitToBacklog, heavyTenantThreshold } from "./backlog-admission.js";

const state = (pending: number, heavy: string[] = []) => ({ pending, heavyTenants: new Set(heavy) });

describe("admitToBacklog", () => {
  it("admits everyone below the cap, heavy tenants included", () => {
    expect(admitToBacklog(state(7_000, ["a"]), 8_000, "a", 1_000)).toBe(true);
    expect(admitToBacklog(state(7_000), 8_000, "b", 1_000)).toBe(true);
  });

  it("refuses everyone past the cap when no tenant holds a heavy share", () => {
    expect(admitToBacklog(state(8_000), 8_000, "b", 1)).toBe(false);
  });

  it("past the cap refuses the heavy tenant and admits the others up to the ceiling", () => {
    const s = state(8_500, ["a"]);
    expect(admitToBacklog(s, 8_000, "a", 1)).toBe(false);
    expect(admitToBacklog(s, 8_000, "b", 1)).toBe(true);
    expect(admitToBacklog(s, 8_000, "b", 300)).toBe(true);
    expect(admitToBacklog(s, 8_000, "b", 301)).toBe(false);
    expect(admitToBacklog(state(8_800, ["a"]), 8_000, "b", 1)).toBe(false);
  });

  it("counts a tenant heavy from a tenth of the cap, at least one task", () => {
    expect(heavyTenantThreshold(8_000)).toBe(800);
    expect(heavyTenantThreshold(5)).toBe(1);
  });
});
