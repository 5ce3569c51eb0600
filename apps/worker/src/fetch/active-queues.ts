import type { KeySpace, RedisClient } from "@tasklane/queue";

/**
 * Which BullMQ queues may hold work, as this process sees it: the shared
 * active-queue set, a per-queue "nothing before T" mark after an empty fetch
 * (T = the next delayed job, or never until the doorbell rings), and the
 * doorbell itself, which clears the mark.
 */
export class ActiveQueues {
  private members = new Set<string>();
  private readonly emptyUntil = new Map<string, number>();
  /** Doorbells heard per queue: an empty fetch that overlapped one proves nothing. */
  private readonly rings = new Map<string, number>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    /** A delayed job counts as ready this long before it is due (WORKER_START_AHEAD_MS). */
    private readonly aheadMs = 0,
  ) {}

  async refresh(): Promise<void> {
    this.members = new Set(await this.redis.smembers(this.keys.activeQueues));
  }

  ring(name: string): void {
    this.members.add(name);
    this.emptyUntil.delete(name);
    this.rings.set(name, (this.rings.get(name) ?? 0) + 1);
  }

  /** Take before a fetch, hand to markEmpty after it. */
  ringsHeard(name: string): number {
    return this.rings.get(name) ?? 0;
  }

  /** Queues worth a fetch right now. */
  ready(now: number): string[] {
    const out: string[] = [];
    for (const name of this.members) {
      if ((this.emptyUntil.get(name) ?? 0) <= now) out.push(name);
    }
    return out;
  }

  /** Not before `until` (a rate limit or a concurrency cap); a doorbell clears it and the limit is checked again. */
  defer(name: string, until: number): void {
    this.emptyUntil.set(name, until);
  }

  /**
   * After an empty fetch: look again when the earliest delayed job is due.
   * A doorbell heard since the fetch began (`ringsBefore` differs) means work
   * arrived meanwhile, maybe due before that: the queue then stays ready.
   */
  async markEmpty(name: string, ringsBefore: number): Promise<void> {
    const earliest = await this.redis.zrange(`${this.keys.prefix}:${name}:delayed`, "0", "0", "WITHSCORES");
    if (this.ringsHeard(name) !== ringsBefore) return;
    const score = earliest[1];
    if (score !== undefined) {
      // BullMQ scores delayed jobs as timestamp * 0x1000 + a counter.
      this.emptyUntil.set(name, Math.floor(Number(score) / 0x1000) - this.aheadMs);
      return;
    }
    this.emptyUntil.set(name, Number.POSITIVE_INFINITY);
    await this.retireIfEmpty(name);
  }

  /** Milliseconds until some queue becomes ready again (delayed work), capped. */
  msUntilNextDue(now: number, cap: number): number {
    let min = cap;
    for (const name of this.members) {
      const until = this.emptyUntil.get(name) ?? 0;
      min = Math.min(min, Math.max(0, until - now));
    }
    return min;
  }

  /**
   * Remove a drained queue from the shared set. Dispatchers add jobs first and
   * SADD after, so re-checking after our SREM closes the race: a job added in
   * between is seen here and the queue goes back in.
   */
  private async retireIfEmpty(name: string): Promise<void> {
    await this.redis.srem(this.keys.activeQueues, name);
    const base = `${this.keys.prefix}:${name}`;
    const counts = (await this.redis.pipeline().llen(`${base}:wait`).zcard(`${base}:prioritized`).zcard(`${base}:delayed`).exec()) ?? [];
    const pending = counts.reduce((sum, [, n]) => sum + (typeof n === "number" ? n : 0), 0);
    if (pending > 0) {
      await this.redis.sadd(this.keys.activeQueues, name);
      this.emptyUntil.delete(name);
    } else {
      this.members.delete(name);
      this.emptyUntil.delete(name);
    }
  }
}
