import { readFileSync } from "node:fs";
import os from "node:os";

/**
 * What a system call costs on this machine, one of the facts that tell two
 * VMs apart when the same code's ratios to the peers move between them.
 * Tasklane's hops make more calls per task than a worker pipelining to one
 * server, but on a VM with page-table isolation (1.3 µs a call) they came to
 * only ~10–14 µs of a PUSH task's ~500 (test/bench/analysis.md).
 */
export interface KernelFacts {
  /** `os.type()` and `os.release()`, e.g. "Linux 6.1.0". */
  release: string;
  /** From /sys/devices/system/cpu/vulnerabilities/meltdown; null where Linux does not say. */
  pageTableIsolation: boolean | null;
  /** ns per `getuid` (a real system call, not vDSO) from Node: the median of 3 rounds of 200,000. */
  syscallNs: number;
}

export function measureKernel(): KernelFacts {
  let pageTableIsolation: boolean | null = null;
  try {
    pageTableIsolation = /\bPTI\b/.test(readFileSync("/sys/devices/system/cpu/vulnerabilities/meltdown", "utf8"));
  } catch {
    // not Linux, or no such file
  }
  const rounds: number[] = [];
  for (let r = 0; r < 3; r++) {
    const calls = 200_000;
    const start = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) process.getuid?.();
    rounds.push(Number(process.hrtime.bigint() - start) / calls);
  }
  rounds.sort((a, b) => a - b);
  return { release: `${os.type()} ${os.release()}`, pageTableIsolation, syscallNs: Math.round(rounds[1] ?? 0) };
}

/** The report's line for it. */
export function describeKernel(k: KernelFacts): string {
  const pti = k.pageTableIsolation === null ? "" : k.pageTableIsolation ? ", page-table isolation on" : ", page-table isolation off";
  return `${k.release}${pti}; a system call ~${(k.syscallNs / 1000).toFixed(2)} µs (\`getuid\` from Node)`;
}
