/**
 * How busy the whole machine was over a window, from /proc/stat: every
 * process counts, the systems' and everything else's. A latency tail at a
 * steady rate is mostly waiting for a core, so the latency scenarios say how
 * many of the cores were in use while they measured, and how much time the
 * hypervisor took for other guests (steal).
 */
import { readFile } from "node:fs/promises";

/** Clock ticks of all cores since boot, from /proc/stat's aggregate `cpu` line. */
export interface CpuTimes {
  /** user, nice, system, irq and softirq (guest time is already inside user and nice). */
  busy: number;
  /** idle and iowait. */
  idle: number;
  steal: number;
}

/** The aggregate `cpu` line of /proc/stat's text, or undefined when there is none. */
export function parseProcStat(text: string): CpuTimes | undefined {
  const line = text.split("\n").find((l) => l.startsWith("cpu "));
  if (!line) return undefined;
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return { busy: user + nice + system + irq + softirq, idle: idle + iowait, steal };
}

/** Now, or undefined where there is no /proc/stat (not Linux). */
export async function readCpuTimes(): Promise<CpuTimes | undefined> {
  try {
    return parseProcStat(await readFile("/proc/stat", "utf8"));
  } catch {
    return undefined;
  }
}

/** Shares (0–1) of all cores' time between two readings: in use, and taken by the hypervisor. */
export interface MachineLoad {
  busy: number;
  steal: number;
}

export function machineLoadBetween(before: CpuTimes, after: CpuTimes): MachineLoad | undefined {
  const busy = after.busy - before.busy;
  const steal = after.steal - before.steal;
  const total = busy + (after.idle - before.idle) + steal;
  if (!(total > 0)) return undefined;
  return { busy: busy / total, steal: steal / total };
}
