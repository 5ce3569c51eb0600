import { originKey, type ClaimedDelivery, type InFlightCounts } from "@tasklane/db";

/**
 * Deliveries this process is running: counted overall (NOTIFIER_CONCURRENCY),
 * per tenant and origin and per tenant (the claim asks only for what still
 * fits under each cap), and kept as promises so a shutdown can wait for them.
 */
export class InFlight {
  private readonly perOrigin = new Map<string, number>();
  private readonly perTenant = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();

  get size(): number {
    return this.running.size;
  }

  /** Copies, handed to the claim so this process's own in-flight work counts against each cap. */
  counts(): InFlightCounts {
    return { byOrigin: new Map(this.perOrigin), byTenant: new Map(this.perTenant) };
  }

  /** `work` must handle its own errors (the delivery runner logs them); a rejection here is ignored. */
  track(delivery: Pick<ClaimedDelivery, "tenantId" | "origin">, work: Promise<void>): void {
    const key = originKey(delivery.tenantId, delivery.origin);
    increment(this.perOrigin, key);
    increment(this.perTenant, delivery.tenantId);
    const tracked: Promise<void> = work
      .catch(() => undefined)
      .finally(() => {
        this.running.delete(tracked);
        decrement(this.perOrigin, key);
        decrement(this.perTenant, delivery.tenantId);
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

function increment(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}
