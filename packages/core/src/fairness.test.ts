import { describe, expect, it } from "vitest";
import { pickStarts, slotShare, StartBatchCap, WeightedFairPicker, type TenantSlots } from "./fairness.js";

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

describe("slotShare", () => {
  it("is the weight's part of the worker, the whole worker alone, and at least one slot", () => {
    expect(slotShare(8, 1, 1)).toBe(8);
    expect(slotShare(8, 3, 3)).toBe(8);
    expect(slotShare(8, 1, 2)).toBe(4);
    expect(slotShare(8, 3, 4)).toBe(6);
    expect(slotShare(8, 1, 4)).toBe(2);
    expect(slotShare(8, 1, 3)).toBe(2);
    expect(slotShare(8, 1, 20)).toBe(1);
    expect(slotShare(8, 0, 2)).toBe(4);
  });
});

describe("pickStarts", () => {
  const tenant = (tenantId: string, held: number, waiting: boolean, weight = 1): TenantSlots => ({ tenantId, weight, held, waiting });
  const count = (picks: string[]) => {
    const counts: Record<string, number> = {};
    for (const id of picks) counts[id] = (counts[id] ?? 0) + 1;
    return counts;
  };

  it("gives a lone tenant every free slot, and nothing past them", () => {
    expect(count(pickStarts(new WeightedFairPicker(), 8, [tenant("a", 0, true)], 100))).toEqual({ a: 8 });
    expect(count(pickStarts(new WeightedFairPicker(), 8, [tenant("a", 5, true)], 100))).toEqual({ a: 3 });
    expect(pickStarts(new WeightedFairPicker(), 8, [tenant("a", 8, true)], 100)).toEqual([]);
    expect(pickStarts(new WeightedFairPicker(), 8, [tenant("a", 0, true)], 3)).toHaveLength(3);
  });

  it("starts a tenant within its share while another tenant holds every slot", () => {
    const picks = pickStarts(new WeightedFairPicker(), 8, [tenant("a", 8, true), tenant("b", 0, true)], 100);
    expect(count(picks)).toEqual({ b: 4 });
  });

  it("sizes the share by weight among the tenants holding or waiting", () => {
    expect(count(pickStarts(new WeightedFairPicker(), 8, [tenant("a", 8, true, 3), tenant("b", 0, true, 1)], 100))).toEqual({ b: 2 });
    expect(count(pickStarts(new WeightedFairPicker(), 8, [tenant("a", 8, true, 1), tenant("b", 0, true, 3)], 100))).toEqual({ b: 6 });
    // a has nothing more waiting but still holds the worker: b's share is half, not all of it.
    expect(count(pickStarts(new WeightedFairPicker(), 8, [tenant("a", 8, false), tenant("b", 0, true)], 100))).toEqual({ b: 4 });
  });

  it("gives every waiting tenant at least one slot when there are more tenants than slots", () => {
    const others = Array.from({ length: 10 }, (_, i) => tenant(`t${i}`, 0, true));
    const picks = pickStarts(new WeightedFairPicker(), 8, [tenant("a", 8, true), ...others], 100);
    expect(count(picks)).toEqual(Object.fromEntries(others.map((t) => [t.tenantId, 1])));
  });

  it("lets a tenant past its share start nothing until it is back within it", () => {
    // b holds its share; a lent it slots and is still past its own: nobody starts.
    expect(pickStarts(new WeightedFairPicker(), 8, [tenant("a", 8, true), tenant("b", 4, true)], 100)).toEqual([]);
    // Three of a's requests are over: still nothing free.
    expect(pickStarts(new WeightedFairPicker(), 8, [tenant("a", 5, true), tenant("b", 4, true)], 100)).toEqual([]);
    expect(count(pickStarts(new WeightedFairPicker(), 8, [tenant("a", 3, true), tenant("b", 4, true)], 100))).toEqual({ a: 1 });
  });

  it("lets free slots go to a tenant past its share when the other has what it is owed (work-conserving)", () => {
    // b holds one slot and has nothing waiting: a, at its share of 4, still takes the 3 free slots.
    expect(count(pickStarts(new WeightedFairPicker(), 8, [tenant("a", 4, true), tenant("b", 1, false)], 100))).toEqual({ a: 3 });
    // Three shares of 8 are 2 each: the 2 slots they leave go to the three in fair order.
    const picks = count(pickStarts(new WeightedFairPicker(), 8, [tenant("a", 0, true), tenant("b", 0, true), tenant("c", 0, true)], 100));
    expect(Object.values(picks).reduce((x, y) => x + y, 0)).toBe(8);
    for (const id of ["a", "b", "c"]) expect(picks[id]).toBeGreaterThanOrEqual(2);
  });

  it("takes owed starts in weighted fair order among the tenants owed, within n", () => {
    const picker = new WeightedFairPicker();
    const picks = pickStarts(picker, 100, [tenant("x", 100, true), tenant("a", 0, true), tenant("b", 0, true)], 4);
    expect(count(picks)).toEqual({ a: 2, b: 2 });
  });
});
