/**
 * 7. Memory: peak RSS of every process during scenario 1 (sampled there
 * every 200 ms from /proc/<pid>/status, VmRSS and VmHWM). Runs scenario 1
 * when it was not part of this invocation.
 */
import type { Scenario } from "../lib/scenario.js";
import { throughputScenario } from "./s1-throughput.js";

export const memoryScenario: Scenario = {
  id: 7,
  title: "Memory: peak RSS per process during scenario 1",
  async run(ctx) {
    const s1 = ctx.earlier.get(1) ?? (await throughputScenario.run(ctx));
    return {
      id: 7,
      title: this.title,
      method:
        "Peak resident set size of each process while scenario 1 ran for that system (warm-up and every run included), sampled every 200 ms from " +
        "/proc/<pid>/status (the higher of VmRSS and the kernel's high-water mark VmHWM). Tasklane's figure is the sum of its processes; " +
        "the PUSH endpoint and the SDK pull worker stand for the tenant's side and are listed apart.",
      figures: [],
      notes: ctx.earlier.has(1) ? [] : ["Scenario 1 was run for this (it was not selected)."],
      memory: s1.memory ?? [],
    };
  },
};
