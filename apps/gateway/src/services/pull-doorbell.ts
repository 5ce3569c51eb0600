import { publishBestEffort, type RedisClient } from "@tasklane/queue";

export interface ArmedBell {
  /** Resolves on a ring since arm() or after `ms`, whichever comes first. */
  wait(ms: number, abort?: AbortSignal): Promise<void>;
  /** Stops listening; call once the bell is no longer waited on. */
  disarm(): void;
}

/**
 * Wakes long-polling leaseTasks calls when work arrives in a PULL queue, on
 * any gateway instance: submissions publish the queue id on a Redis channel
 * and every gateway relays it to its local waiters. A lease arms its bell
 * before it looks for work, so a ring during that look is not lost; one lost
 * anyway (Redis reconnecting) costs at most one poll interval, after which
 * the waiter looks in Postgres again.
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

  /**
   * Rings the queues' bells on every gateway. Best effort, and called after a
   * commit with the caller waiting for its answer, so it never holds that
   * answer: skipped at once while the publisher is not connected (ioredis would
   * keep the PUBLISH in its offline queue until Redis is back, one per
   * submission for the length of an outage), and waited for at most
   * FAST_PATH_WAIT_MS otherwise (a connection that died unnoticed). A waiter
   * that misses the ring finds the work on its next look in Postgres, at most
   * POLL_MS later (lease-service.ts); during an outage the subscribers hear
   * nothing anyway.
   */
  async ring(queueIds: Iterable<string>): Promise<void> {
    await publishBestEffort(this.publisher, this.channel, [...new Set(queueIds)], "the pull doorbell", "long polls find the work on their next look");
  }

  /**
   * Starts listening for the queue's ring now. Arm before looking for work:
   * a ring that arrives while the lease statement runs (for a task committed
   * after its snapshot) then ends the wait at once instead of being missed.
   */
  arm(queueId: string): ArmedBell {
    const subscribed = this.ensureSubscribed();
    // Handled here so a lease that never waits leaves no unhandled rejection; wait() still throws it.
    subscribed.catch(() => undefined);
    let rung = false;
    let wake: (() => void) | undefined;
    const onRing = () => {
      rung = true;
      wake?.();
    };
    const set = this.waiters.get(queueId) ?? new Set<() => void>();
    set.add(onRing);
    this.waiters.set(queueId, set);
    const disarm = () => {
      set.delete(onRing);
      if (set.size === 0 && this.waiters.get(queueId) === set) this.waiters.delete(queueId);
    };
    return {
      disarm,
      wait: async (ms: number, abort?: AbortSignal) => {
        await subscribed;
        if (rung || abort?.aborted) return;
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            abort?.removeEventListener("abort", done);
            wake = undefined;
            resolve();
          };
          const timer = setTimeout(done, ms);
          abort?.addEventListener("abort", done, { once: true });
          wake = done;
        });
      },
    };
  }

  close(): void {
    for (const set of this.waiters.values()) for (const wake of set) wake();
    this.waiters.clear();
    this.subscriber.disconnect();
  }
}
