import type { RedisClient } from "@tasklane/queue";

/**
 * Wakes long-polling leaseTasks calls when work arrives in a PULL queue, on
 * any gateway instance: submissions publish the queue id on a Redis channel
 * and every gateway relays it to its local waiters. A missed ring costs at
 * most one poll interval (the waiter re-checks Postgres on a timer anyway).
 */
export class PullDoorbell {
  private readonly waiters = new Map<string, Set<() => void>>();
  private subscribed: Promise<unknown> | undefined;

  constructor(
    private readonly publisher: RedisClient,
    private readonly subscriber: RedisClient,
    private readonly channel: string,
  ) {}

  private ensureSubscribed(): Promise<unknown> {
    this.subscribed ??= this.subscriber.subscribe(this.channel).then(() => {
      this.subscriber.on("message", (channel: string, queueId: string) => {
        if (channel !== this.channel) return;
        const set = this.waiters.get(queueId);
        if (!set) return;
        this.waiters.delete(queueId);
        for (const wake of set) wake();
      });
    });
    return this.subscribed;
  }

  async ring(queueIds: Iterable<string>): Promise<void> {
    const unique = [...new Set(queueIds)];
    if (unique.length === 0) return;
    const pipeline = this.publisher.pipeline();
    for (const id of unique) pipeline.publish(this.channel, id);
    await pipeline.exec();
  }

  /** Resolves on a ring for the queue or after `ms`, whichever comes first. */
  async wait(queueId: string, ms: number, abort?: AbortSignal): Promise<void> {
    await this.ensureSubscribed();
    await new Promise<void>((resolve) => {
      const set = this.waiters.get(queueId) ?? new Set<() => void>();
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        abort?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      abort?.addEventListener("abort", done, { once: true });
      set.add(done);
      this.waiters.set(queueId, set);
    });
  }

  close(): void {
    for (const set of this.waiters.values()) for (const wake of set) wake();
    this.waiters.clear();
    this.subscriber.disconnect();
  }
}
