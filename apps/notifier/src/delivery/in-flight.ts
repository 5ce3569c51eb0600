/**
 * Deliveries this process is running: counted overall (NOTIFIER_CONCURRENCY)
 * and per endpoint URL (the claim query asks only for what still fits), and
 * kept as promises so a shutdown can wait for them.
 */
export class InFlight {
  private readonly perUrl = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();

  get size(): number {
    return this.running.size;
  }

  /** A copy, handed to the claim so this process's own in-flight work counts against each endpoint's cap. */
  byUrl(): Map<string, number> {
    return new Map(this.perUrl);
  }

  /** `work` must handle its own errors (the delivery runner logs them); a rejection here is ignored. */
  track(url: string, work: Promise<void>): void {
    this.perUrl.set(url, (this.perUrl.get(url) ?? 0) + 1);
    const tracked: Promise<void> = work
      .catch(() => undefined)
      .finally(() => {
        this.running.delete(tracked);
        const left = (this.perUrl.get(url) ?? 1) - 1;
        if (left > 0) this.perUrl.set(url, left);
        else this.perUrl.delete(url);
      });
    this.running.add(tracked);
  }

  /**
   * Waits for what runs now, at most `timeoutMs`; returns how many are still
   * running. Callers stop claiming first, so one snapshot covers everything.
   */
  async drain(timeoutMs: number): Promise<number> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([Promise.allSettled([...this.running]), timedOut]);
    clearTimeout(timer);
    return this.running.size;
  }
}
