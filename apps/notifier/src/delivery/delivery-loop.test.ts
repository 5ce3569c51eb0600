import { describe, expect, it } from "vitest";
import { owedShare, tenantShare } from "./delivery-loop.js";

describe("tenantShare", () => {
  it("is half the slots, at least one", () => {
    expect(tenantShare(32)).toBe(16);
    expect(tenantShare(1)).toBe(1);
  });
});

describe("owedShare", () => {
  it("splits the slots between the tenants holding some and one newcomer", () => {
    expect(owedShare(32, 0)).toBe(32);
    expect(owedShare(32, 1)).toBe(16);
    expect(owedShare(32, 10)).toBe(2);
  });

  it("is at least one slot, however many tenants hold some", () => {
    expect(owedShare(32, 100)).toBe(1);
    expect(owedShare(1, 1)).toBe(1);
  });
});
