/**
 * 4. Immediate tasks at a steady 1,000 tasks/s: submit acknowledged →
 * handler start (and, for context, submit sent → handler start).
 */
import { addCpuFigures, addLatencyFigures, CPU_AT_RATE_METHOD, latencyNotes, measureLatency, LOW_RATE, measureEverySystem, rateWarmUpMs, rateWarmUpText } from "../lib/latency.js";
import { fmt, log } from "../lib/progress.js";
import { FigureSet } from "../lib/results.js";
import type { Scenario } from "../lib/scenario.js";
import type { BenchSystem } from "../lib/system.js";

const RATE = 1000;

export const immediateScenario: Scenario = {
  id: 4,
  title: "Immediate tasks at 1,000 tasks/s: submit → handler start",
  async run(ctx) {
    const figures = new FigureSet();
    const notes: string[] = [];
    const measure = async (system: BenchSystem, rate = RATE, label = system.label) => {
      const runs = await measureLatency(system, {
        scope: rate === RATE ? "s4 immediate" : `s4 immediate at ${rate}/s`,
        rate,
        durationMs: ctx.sizes.latencySeconds * 1000,
        runs: ctx.runs,
        warmUp: ctx.quick ? 100 : 300,
        rateWarmUpMs: rateWarmUpMs(ctx, rate),
        fromAck: true,
        drainMs: ctx.sizes.latencyDrainSeconds * 1000,
        task: (_index, sentAt) => ({ ref: sentAt }),
      });
      for (const r of runs) {
        if (r.fromAck) addLatencyFigures(figures, label, "ack→start ", r.fromAck);
        figures.add(label, "sent→start p50", "ms", "lower", r.fromRef.p50);
        figures.add(label, "sent→start p99", "ms", "lower", r.fromRef.p99);
      }
      addCpuFigures(figures, notes, label, runs);
      notes.push(...latencyNotes(label, runs));
      const early = runs.reduce((n, r) => n + (r.fromAck?.negative ?? 0), 0);
      if (early) notes.push(`${label}: ${fmt(early)} handlers started before the submitting client had read the acknowledgement (counted as negative delays).`);
    };
    await measureEverySystem(ctx, measure);
    log("s4 immediate", "done");
    return {
      id: 4,
      title: this.title,
      method:
        `${ctx.sizes.latencySeconds} s per run at ${fmt(RATE)} tasks/s (${rateWarmUpText(ctx)}): every 10 ms one batch call (Tasklane submitTasks, BullMQ addBulk, ` +
        "graphile-worker addJobs, pg-boss insert) with the tasks due by then. ack→start = handler start − the moment the client had the " +
        `call's answer; sent→start = handler start − the moment the call was sent. "Tasklane PUSH/PULL at ${LOW_RATE}/s" are the same at a rate they sustain. ` +
        CPU_AT_RATE_METHOD,
      figures: figures.summaries(),
      notes,
    };
  },
};
