import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { describeKernel, measureKernel } from "./kernel.js";

describe("measureKernel", () => {
  it("times a real system call and a page fault, and reads whether page tables are isolated", () => {
    const facts = measureKernel();
    expect(facts.syscallNs).toBeGreaterThan(0);
    expect(Number.isFinite(facts.syscallNs)).toBe(true);
    // A fault maps and zeroes a page: no machine does that in under 50 ns, or takes a millisecond.
    expect(facts.pageTouchNs).toBeGreaterThan(50);
    expect(facts.pageTouchNs).toBeLessThan(1_000_000);
    let meltdown: string | null = null;
    try {
      meltdown = readFileSync("/sys/devices/system/cpu/vulnerabilities/meltdown", "utf8");
    } catch {
      // not Linux
    }
    expect(facts.pageTableIsolation).toBe(meltdown === null ? null : meltdown.includes("PTI"));
  });
});

describe("describeKernel", () => {
  it("names the kernel, its page-table isolation and the call's and the page fault's costs in µs", () => {
    expect(describeKernel({ release: "Linux 6.1.0", pageTableIsolation: true, syscallNs: 1272 })).toBe(
      "Linux 6.1.0, page-table isolation on; a system call ~1.27 µs (`getuid` from Node)",
    );
    expect(describeKernel({ release: "Linux 6.1.0", pageTableIsolation: false, syscallNs: 95 })).toBe(
      "Linux 6.1.0, page-table isolation off; a system call ~0.10 µs (`getuid` from Node)",
    );
    expect(describeKernel({ release: "Linux 6.18.44", pageTableIsolation: true, syscallNs: 1220, pageTouchNs: 10_150 })).toBe(
      "Linux 6.18.44, page-table isolation on; a system call ~1.22 µs (`getuid` from Node); fresh memory ~10.15 µs per 4 KiB page first touched (its page fault)",
    );
    // A result file written before the fault was timed.
    expect(describeKernel({ release: "Darwin 23.0.0", pageTableIsolation: null, syscallNs: 300 })).toBe("Darwin 23.0.0; a system call ~0.30 µs (`getuid` from Node)");
  });
});
