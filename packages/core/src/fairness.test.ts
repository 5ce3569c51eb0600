import { describe, expect, it } from "vitest";
import { StartBatchCap, WeightedFairPicker } from "./fairness.js";

function share(picker: WeightedFairPicker, candidates: { tenantId: string; weight: number }[], n: number) {
  const counts = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const t = picker.pick(candidates) as string;
    counts.set(t, (counts.get(t) ?? 0) + 1);
  }
  return counts;
}

describe("WeightedFairPicker", () => {
  it("splits starts in proportion to weight", () => {
    const counts = share(new WeightedFairPicker(), [{ tenantId: "a", weight: 3 }, { tenantId: "b", weight: 1 }], 4000);
    expect(counts.get("a")).toBe(3000);
    expect(counts.get("b")).toBe(1000);
  });

  it("gives equal weights equal turns, interleaved", () => {
    const picker = new WeightedFairPicker();
    const order = Array.from({ length: 6 }, () => picker.pick([{ tenantId: "a", weight: 1 }, { tenantId: "b", weight: 1 }]));
    expect(order).toEqual(["a", "b", "a", "b", "a", "b"]);
  });

  it("does not let an idle tenant bank credit", () => {
    const picker = new WeightedFairPicker();
    share(picker, [{ tenantId: "a", weight: 1 }], 1000);
    // b arrives late; it must not get 1000 starts in a row.
    const next = Array.from({ length: 10 }, () => picker.pick([{ tenantId: "a", weight: 1 }, { tenantId: "b", weight: 1 }]));
    expect(next.filter((t) => t === "a").length).toBeGreaterThanOrEqual(4);
  });

  it("does not let a tenant that went quiet bank the picks it sat out", () => {
    const picker = new WeightedFairPicker();
    const both = [{ tenantId: "a", weight: 1 }, { tenantId: "b", weight: 1 }];
    share(picker, both, 20);
    // b's queue runs dry; a alone takes 1,000 picks, then b has work again.
    share(picker, [{ tenantId: "a", weight: 1 }], 1000);
    const next = Array.from({ length: 10 }, () => picker.pick(both));
    expect(next).toEqual(["b", "a", "b", "a", "b", "a", "b", "a", "b", "a"]);
  });

  it("returns null without candidates and treats weight < 1 as 1", () => {
    const picker = new WeightedFairPicker();
    expect(picker.pick([])).toBeNull();
    const counts = share(picker, [{ tenantId: "a", weight: 0 }, { tenantId: "b", weight: 1 }], 100);
    expect(counts.get("a")).toBe(50);
  });
});

describe("StartBatchCap", () => {
  const sizes = { alone: 50, shared: 25 };

  it("allows the bigger batch while one tenant has work, however long it has had it", () => {
    const cap = new StartBatchCap(sizes, 5_000);
    expect(cap.at(0)).toBe(50);
    for (let t = 0; t <= 60_000; t += 1_000) {
      cap.observe(["a"], t);
      expect(cap.at(t)).toBe(50);
    }
  });

  it("shares once a second tenant has had work within the window, even when it has none at the moment", () => {
    const cap = new StartBatchCap(sizes, 5_000);
    cap.observe(["a", "b"], 0);
    expect(cap.at(0)).toBe(25);
    // b trickles: seen now and then, a throughout.
    cap.observe(["a"], 3_000);
    expect(cap.at(4_999)).toBe(25);
    expect(cap.at(5_000)).toBe(25);
  });

  it("goes back to the bigger batch once the other tenant has been quiet for the whole window", () => {
    const cap = new StartBatchCap(sizes, 5_000);
    cap.observe(["a", "b"], 0);
    cap.observe(["a"], 5_000);
    expect(cap.at(5_001)).toBe(50);
    cap.observe(["c"], 6_000);
    expect(cap.at(6_000)).toBe(25);
  });
});
