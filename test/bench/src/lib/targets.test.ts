import { describe, expect, it } from "vitest";
import type { ScenarioResult } from "./results.js";
import { spread } from "./stats.js";
import { checkTargets } from "./targets.js";

function throughput(rates: Record<string, number>): Map<number, ScenarioResult> {
  const figures = Object.entries(rates).map(([system, rate]) => {
    const runs = [rate, rate * 0.9, rate * 1.1];
    return { system, metric: "tasks/s", unit: "tasks/s", better: "higher" as const, runs, ...spread(runs) };
  });
  return new Map([[1, { id: 1, title: "s1", method: "", figures, notes: [] }]]);
}

const aheadRow = (results: Map<number, ScenarioResult>, system: string) =>
  checkTargets(results).find((t) => t.system === system && t.target.startsWith("e2e throughput ahead"));

describe("bench targets", () => {
  it("shows Tasklane's ratio to each peer, and misses the target while any one of them is ahead", () => {
    const results = throughput({
      "Tasklane PUSH": 8_000,
      "Tasklane PULL": 10_000,
      BullMQ: 20_000,
      "graphile-worker": 1_250,
      "graphile-worker (batched)": 32_000,
      "pg-boss": 7_500,
    });
    expect(aheadRow(results, "Tasklane PUSH")).toEqual({
      target: "e2e throughput ahead of graphile-worker and pg-boss",
      system: "Tasklane PUSH",
      measured: "ahead: 6.40× graphile-worker, 1.07× pg-boss; behind: 0.25× graphile-worker (batched)",
      status: "missed",
    });
    const share = checkTargets(results).find((t) => t.system === "Tasklane PULL" && t.target.startsWith("e2e durable"));
    expect(share).toMatchObject({ measured: "50% (10,000 vs 20,000 tasks/s)", status: "met" });
  });

  it("is met only when Tasklane is ahead of every peer, and not measured while a peer is missing", () => {
    const all = throughput({ "Tasklane PULL": 10_000, BullMQ: 20_000, "graphile-worker": 1_250, "graphile-worker (batched)": 9_000, "pg-boss": 7_500 });
    expect(aheadRow(all, "Tasklane PULL")).toMatchObject({ status: "met", measured: "ahead: 8.00× graphile-worker, 1.11× graphile-worker (batched), 1.33× pg-boss" });
    const partial = throughput({ "Tasklane PULL": 10_000, BullMQ: 20_000, "pg-boss": 7_500 });
    expect(aheadRow(partial, "Tasklane PULL")).toMatchObject({ status: "not measured", measured: "ahead: 1.33× pg-boss" });
    expect(aheadRow(partial, "Tasklane PUSH")).toMatchObject({ status: "not measured", measured: "—" });
  });
});
