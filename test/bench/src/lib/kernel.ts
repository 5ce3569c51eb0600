import { readFileSync } from "node:fs";
import os from "node:os";

/**
 * What a system call costs on this machine. Tasklane's processes talk over
 * sockets on every hop, so they pay it far more often per task than a
 * peer whose worker pipelines to one server: on a VM whose kernel isolates
 * page tables (PTI), every call and every wake-up costs more, and the ratios
 * to the peers move with it (test/bench/analysis.md, The machine).
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
