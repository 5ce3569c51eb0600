import { readFileSync } from "node:fs";
import os from "node:os";
import { spread } from "./stats.js";

/**
 * What a system call and a page fault cost on this machine, facts that tell
 * two VMs apart when the same code's ratios to the peers move between them.
 * Tasklane's hops make more calls per task than a worker pipelining to one
 * server, but on a VM with page-table isolation (1.3 µs a call) they came to
 * only ~10–14 µs of a PUSH task's ~500; on a VM where first touching a page
 * cost ~10 µs, the PUSH worker's faults (V8 committing young-generation pages
 * again as it resizes them) were ~6% of its CPU (test/bench/findings.md).
 */
export interface KernelFacts {
  /** `os.type()` and `os.release()`, e.g. "Linux 6.1.0". */
  release: string;
  /** From /sys/devices/system/cpu/vulnerabilities/meltdown; null where Linux does not say. */
  pageTableIsolation: boolean | null;
  /** ns per `getuid` (a real system call, not vDSO) from Node: the median of 3 rounds of 200,000. */
  syscallNs: number;
  /**
   * ns to first touch a page of fresh memory (4 KiB; a minor fault): 64 MiB, above glibc's largest
   * mmap threshold so always freshly mapped, touched once; the median of 3 rounds. Absent from
   * result files written before it was measured.
   */
  pageTouchNs?: number;
}

const PAGE = 4096;
const FRESH_BYTES = 64 * 1024 * 1024;

function medianOf3(measure: () => number): number {
  return Math.round(spread([measure(), measure(), measure()]).median);
}

export function measureKernel(): KernelFacts {
  let pageTableIsolation: boolean | null = null;
  try {
    pageTableIsolation = /\bPTI\b/.test(readFileSync("/sys/devices/system/cpu/vulnerabilities/meltdown", "utf8"));
  } catch {
    // not Linux, or no such file
  }
  const syscallNs = medianOf3(() => {
    const calls = 200_000;
    const start = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) process.getuid?.();
    return Number(process.hrtime.bigint() - start) / calls;
  });
  const pageTouchNs = medianOf3(() => {
    const fresh = Buffer.allocUnsafeSlow(FRESH_BYTES);
    const start = process.hrtime.bigint();
    for (let i = 0; i < FRESH_BYTES; i += PAGE) fresh[i] = 1;
    return Number(process.hrtime.bigint() - start) / (FRESH_BYTES / PAGE);
  });
  return { release: `${os.type()} ${os.release()}`, pageTableIsolation, syscallNs, pageTouchNs };
}

/** The report's line for it. */
export function describeKernel(k: KernelFacts): string {
  const pti = k.pageTableIsolation === null ? "" : k.pageTableIsolation ? ", page-table isolation on" : ", page-table isolation off";
  const fault = k.pageTouchNs === undefined ? "" : `; fresh memory ~${(k.pageTouchNs / 1000).toFixed(2)} µs per 4 KiB page first touched (its page fault)`;
  return `${k.release}${pti}; a system call ~${(k.syscallNs / 1000).toFixed(2)} µs (\`getuid\` from Node)${fault}`;
}
