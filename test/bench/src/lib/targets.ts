/**
 * The targets (2-core machine), checked against a run's medians.
 * A target whose figure was not measured in this run is "not measured".
 */
import type { FigureSummary, ScenarioResult } from "./results.js";

export interface TargetCheck {
  target: string;
  /** Which system the check is about. */
  system: string;
  measured: string;
  status: "met" | "missed" | "not measured";
}

type Results = ReadonlyMap<number, ScenarioResult>;

const find = (results: Results, scenario: number, system: string, metric: string): FigureSummary | undefined =>
  results.get(scenario)?.figures.find((f) => f.system === system && f.metric === metric);

const ms = (n: number) => `${n < 100 ? n.toFixed(1) : Math.round(n).toLocaleString("en-US")} ms`;

function check(target: string, system: string, figure: FigureSummary | undefined, limit: number, show: (n: number) => string): TargetCheck {
  if (!figure || !Number.isFinite(figure.median)) return { target, system, measured: "—", status: "not measured" };
  const range = figure.runs.length > 1 ? ` (runs ${show(figure.min)}–${show(figure.max)})` : "";
  return { target, system, measured: `${show(figure.median)}${range}`, status: figure.median <= limit ? "met" : "missed" };
}

export function checkTargets(results: Results): TargetCheck[] {
  const out: TargetCheck[] = [];
  const rate = (system: string) => find(results, 1, system, "tasks/s");
  const bull = rate("BullMQ");
  for (const system of ["Tasklane PUSH", "Tasklane PULL"]) {
    const tl = rate(system);
    if (tl && bull) {
      const ratio = tl.median / bull.median;
      out.push({
        target: "e2e durable throughput ≥ 40% of raw BullMQ (same run)",
        system,
        measured: `${Math.round(ratio * 100)}% (${Math.round(tl.median).toLocaleString("en-US")} vs ${Math.round(bull.median).toLocaleString("en-US")} tasks/s)`,
        status: ratio >= 0.4 ? "met" : "missed",
      });
    } else out.push({ target: "e2e durable throughput ≥ 40% of raw BullMQ (same run)", system, measured: "—", status: "not measured" });
    const peers = ["graphile-worker", "graphile-worker (batched)", "pg-boss"].map((p) => ({ p, f: rate(p) }));
    const measured = tl ? peers.flatMap(({ p, f }) => (f ? [{ p, ratio: tl.median / f.median }] : [])) : [];
    // Each peer's ratio, not a verdict alone: one peer ahead must not hide how far ahead of the others Tasklane is.
    const show = (list: typeof measured) => list.map(({ p, ratio }) => `${ratio.toFixed(2)}× ${p}`).join(", ");
    const ahead = measured.filter(({ ratio }) => ratio > 1);
    const behind = measured.filter(({ ratio }) => ratio <= 1);
    out.push({
      target: "e2e throughput ahead of graphile-worker and pg-boss",
      system,
      measured: measured.length === 0 ? "—" : [ahead.length ? `ahead: ${show(ahead)}` : "", behind.length ? `behind: ${show(behind)}` : ""].filter(Boolean).join("; "),
      status: measured.length < peers.length ? "not measured" : behind.length ? "missed" : "met",
    });
  }
  for (const system of ["Tasklane PUSH", "Tasklane PULL"]) {
    out.push(check("delayed start p99 ≤ 10 ms at 1,000/s", system, find(results, 3, system, "p99"), 10, ms));
    out.push(check("delayed start max ≤ 50 ms at 1,000/s", system, find(results, 3, system, "max"), 50, ms));
    out.push(check("immediate submit→start p99 ≤ 10 ms at 1,000/s", system, find(results, 4, system, "ack→start p99"), 10, ms));
  }
  out.push(check("fairness: B's p99 wait ≤ 100 ms", "Tasklane PUSH", find(results, 5, "Tasklane PUSH (per-tenant queues)", "B queue wait p99"), 100, ms));
  out.push(check("recovery of 100,000 tasks ≤ 10 s", "Tasklane", find(results, 6, "Tasklane", "all runnable again"), 10, (n) => `${n.toFixed(2)} s`));
  return out;
}
