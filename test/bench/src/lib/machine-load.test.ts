import { describe, expect, it } from "vitest";
import { machineLoadBetween, parseProcStat, readCpuTimes } from "./machine-load.js";

describe("parseProcStat", () => {
  it("reads the aggregate cpu line: busy without guest time, idle with iowait, steal apart", () => {
    const text = [
      "cpu  100 5 30 800 20 3 2 7 40 0",
      "cpu0 50 2 15 400 10 1 1 3 20 0",
      "intr 12345",
    ].join("\n");
    expect(parseProcStat(text)).toEqual({ busy: 100 + 5 + 30 + 3 + 2, idle: 800 + 20, steal: 7 });
  });

  it("answers undefined without an aggregate line", () => {
    expect(parseProcStat("cpu0 1 2 3 4\nintr 1")).toBeUndefined();
  });
});

describe("machineLoadBetween", () => {
  it("is the share of all cores' ticks in use and stolen over the window", () => {
    const load = machineLoadBetween({ busy: 1000, idle: 5000, steal: 10 }, { busy: 1150, idle: 5040, steal: 20 });
    expect(load?.busy).toBeCloseTo(150 / 200);
    expect(load?.steal).toBeCloseTo(10 / 200);
  });

  it("answers undefined for an empty window", () => {
    const same = { busy: 1, idle: 2, steal: 0 };
    expect(machineLoadBetween(same, same)).toBeUndefined();
  });
});

describe("readCpuTimes", () => {
  it("counts ticks that grow while this process works", async () => {
    const before = await readCpuTimes();
    // Only Linux has /proc/stat; the bench and CI run there.
    expect(before === undefined).toBe(process.platform !== "linux");
    if (before === undefined) return;
    const until = Date.now() + 60;
    while (Date.now() < until) Math.sqrt(Math.random());
    const after = await readCpuTimes();
    expect(after?.busy).toBeGreaterThan(before.busy);
  });
});
