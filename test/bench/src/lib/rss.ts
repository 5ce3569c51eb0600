import { readFile } from "node:fs/promises";

/** Peak resident memory of the processes being watched, in MiB. */
export interface PeakRss {
  label: string;
  peakMiB: number;
}

/**
 * Samples /proc/<pid>/status every `everyMs` for each tracked process and
 * keeps the highest of VmRSS (sampled) and VmHWM (the kernel's own
 * high-water mark, which also catches peaks between samples).
 */
export class RssSampler {
  private readonly tracked = new Map<number, { label: string; peakKiB: number }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly everyMs = 200) {}

  track(pid: number, label: string): void {
    if (!this.tracked.has(pid)) this.tracked.set(pid, { label, peakKiB: 0 });
    this.timer ??= setInterval(() => void this.sample(), this.everyMs);
    this.timer.unref();
  }

  async sample(): Promise<void> {
    await Promise.all(
      [...this.tracked].map(async ([pid, entry]) => {
        try {
          const status = await readFile(`/proc/${pid}/status`, "utf8");
          const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
          const hwm = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
          entry.peakKiB = Math.max(entry.peakKiB, rss, hwm);
        } catch {
          // The process has exited; its peak so far stands.
        }
      }),
    );
  }

  /** Takes a last sample and stops. */
  async stop(): Promise<PeakRss[]> {
    await this.sample();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    return [...this.tracked.values()].map((e) => ({ label: e.label, peakMiB: Math.round((e.peakKiB / 1024) * 10) / 10 }));
  }
}
