import { describe, expect, it } from "vitest";
import { RequestBytesBudget } from "./request-bytes-budget.js";

describe("RequestBytesBudget", () => {
  it("admits bodies while the whole bound has room, and again once they are released", () => {
    const budget = new RequestBytesBudget({ maxBytes: 100, clientShare: 1 });
    expect(budget.tryTake("a", 60)).toBe(true);
    expect(budget.tryTake("b", 40)).toBe(true);
    expect(budget.heldBytes).toBe(100);
    expect(budget.tryTake("c", 1)).toBe(false);
    budget.release("a", 60);
    expect(budget.heldBytes).toBe(40);
    expect(budget.tryTake("c", 60)).toBe(true);
    expect(budget.tryTake("c", 1)).toBe(false);
  });

  it("holds one caller to its share while others still get in", () => {
    const budget = new RequestBytesBudget({ maxBytes: 100 });
    expect(budget.maxClientBytes).toBe(50);
    expect(budget.tryTake("a", 30)).toBe(true);
    expect(budget.tryTake("a", 30)).toBe(false);
    expect(budget.tryTake("a", 20)).toBe(true);
    expect(budget.tryTake("b", 50)).toBe(true);
    expect(budget.heldBytes).toBe(100);
    budget.release("a", 30);
    expect(budget.tryTake("a", 31)).toBe(false);
    expect(budget.tryTake("a", 30)).toBe(true);
  });

  it("holds a caller to a smaller limit when given one", () => {
    const budget = new RequestBytesBudget({ maxBytes: 100 });
    expect(budget.tryTake("anonymous", 10, 15)).toBe(true);
    expect(budget.tryTake("anonymous", 10, 15)).toBe(false);
    expect(budget.tryTake("anonymous", 5, 15)).toBe(true);
    expect(budget.tryTake("a", 50, 80)).toBe(true);
    expect(budget.tryTake("a", 1, 80)).toBe(false);
  });

  it("always admits an empty body and a refusal takes nothing", () => {
    const budget = new RequestBytesBudget({ maxBytes: 10, clientShare: 1 });
    expect(budget.tryTake("a", 10)).toBe(true);
    expect(budget.tryTake("a", 0)).toBe(true);
    expect(budget.tryTake("b", 5)).toBe(false);
    expect(budget.heldBytes).toBe(10);
    budget.release("a", 10);
    expect(budget.heldBytes).toBe(0);
    expect(budget.tryTake("b", 10)).toBe(true);
  });

  it("refuses a bound or share that makes no sense", () => {
    expect(() => new RequestBytesBudget({ maxBytes: 0 })).toThrow(RangeError);
    expect(() => new RequestBytesBudget({ maxBytes: 1.5 })).toThrow(RangeError);
    expect(() => new RequestBytesBudget({ maxBytes: 10, clientShare: 0 })).toThrow(RangeError);
    expect(() => new RequestBytesBudget({ maxBytes: 10, clientShare: 1.5 })).toThrow(RangeError);
  });
});
