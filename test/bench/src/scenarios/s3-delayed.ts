/**
 * 3. Start delay of delayed tasks at a steady 1,000 tasks/s: every task is
 * due DELAY_MS after the schedule's start plus its slot (1 ms apart), so due
 * times arrive as evenly as submissions do; lateness = handler start − runAt.
 */
import { addCpuFigures, addLatencyFigures, CPU_AT_RATE_METHOD, latencyNotes, measureLatency, type LatencyRun, LOW_RATE, measureEverySystem, rateWarmUpMs, rateWarmUpText } from "../lib/latency.js";
import { fmt, log } from "../lib/progress.js";
import { FigureSet } from "../lib/results.js";
import type { Scenario, ScenarioContext } from "../lib/scenario.js";
import type { BenchSystem } from "../lib/system.js";

const RATE = 1000;
const DELAY_MS = 1000;

export const delayedScenario: Scenario = {
  id: 3,
  title: "Start delay of delayed tasks at 1,000 tasks/s",
  async run(ctx) {
    const figures = new FigureSet();
    const notes: string[] = [];
    const measure = async (system: BenchSystem, rate = RATE, label = system.label) => {
      const runs = await measureLatency(system, planFor(ctx, rate));
      record(figures, notes, label, runs);
    };
    await measureEverySystem(ctx, measure);
    log("s3 delayed", "done");
    return {
      id: 3,
      title: this.title,
      method:
        `${ctx.sizes.latencySeconds} s per run at ${fmt(RATE)} tasks/s (one batch call every 10 ms; ${rateWarmUpText(ctx)}), each task due ${fmt(DELAY_MS)} ms after the ` +
        "start of the schedule plus its slot, so due times are spread evenly at 1 per ms; start delay = handler start − runAt " +
        "(handler start timestamped in the PUSH endpoint, the SDK worker's handler, or the peer's handler). Tasklane PUSH and PULL share one platform; " +
        `"Tasklane PUSH/PULL at ${LOW_RATE}/s" are the same at a rate they sustain, to separate the mechanism from saturation; ` +
        "peers use their own delayed-job option (BullMQ delay, graphile-worker runAt, pg-boss startAfter) with default polling settings. " +
        CPU_AT_RATE_METHOD,
      figures: figures.summaries(),
      notes,
    };
  },
};

function planFor(ctx: ScenarioContext, rate: number) {
  return {
    scope: rate === RATE ? "s3 delayed" : `s3 delayed at ${rate}/s`,
    rate,
    durationMs: ctx.sizes.latencySeconds * 1000,
    runs: ctx.runs,
    warmUp: ctx.quick ? 100 : 300,
    rateWarmUpMs: rateWarmUpMs(ctx, rate),
    fromAck: false,
    drainMs: DELAY_MS + ctx.sizes.latencyDrainSeconds * 1000,
    task: (index: number, _sentAt: number, t0: number) => {
      const runAt = t0 + DELAY_MS + Math.floor((index * 1000) / rate);
      return { runAt, ref: runAt };
    },
  };
}

function record(figures: FigureSet, notes: string[], system: string, runs: LatencyRun[]): void {
  for (const r of runs) addLatencyFigures(figures, system, "", r.fromRef, true);
  addCpuFigures(figures, notes, system, runs);
  notes.push(...latencyNotes(system, runs));
}
