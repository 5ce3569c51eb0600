import { gatherLeadMs } from "@tasklane/core";
import { execPipeline, type KeySpace, type RedisClient } from "@tasklane/queue";

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
  /** Queues rung while refresh() reads the shared set (the loop runs one refresh at a time). */
  private rungWhileReading: Set<string> | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySpace,
    /** How far ahead of its due time a take takes a delayed job (WORKER_START_AHEAD_MS). */
    private readonly aheadMs = 0,
  ) {}

  /**
   * Re-reads the shared set. A queue rung while the read was out stays: its
   * doorbell rings from the add script, before the dispatcher's SADD, so the
   * read may have missed it.
   */
  async refresh(): Promise<void> {
    const rung = new Set<string>();
    this.rungWhileReading = rung;
    try {
      const members = new Set(await this.redis.smembers(this.keys.activeQueues));
      for (const name of rung) members.add(name);
      this.members = members;
    } finally {
      this.rungWhileReading = undefined;
    }
  }

  /**
   * Work arrived. Due now (`dueAt` null): the queue is ready. All of it
   * delayed: a queue already planned is looked at no later than the earliest
   * job's gather time (see markDrained) and no sooner than planned, so a
   * queue receiving delayed work at a steady rate is not looked at on every
   * ring.
   */
  ring(name: string, dueAt: number | null = null): void {
    this.rungWhileReading?.add(name);
    const known = this.members.has(name);
    this.members.add(name);
    this.rings.set(name, (this.rings.get(name) ?? 0) + 1);
    // A queue this process did not hold (new to it, or retired) is looked at now all the same:
    // it may hold work whose own ring was missed (pub/sub drops messages while reconnecting).
    if (dueAt === null || !known) {
      this.emptyUntil.delete(name);
      return;
    }
    // Ready now stays ready.
    const planned = this.emptyUntil.get(name);
    if (planned !== undefined) this.emptyUntil.set(name, Math.min(planned, this.gatherAt(dueAt)));
  }

  /** When to look for a delayed job due at `dueAt` (gatherLeadMs). */
  private gatherAt(dueAt: number): number {
    return dueAt - gatherLeadMs(this.aheadMs);
  }

  /** Take before a fetch, hand to markDrained after it. */
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
   * After a fetch that drained the queue (the take's reply says when its next
   * delayed job is due, if it has one): look again once that job is due
   * within half the look-ahead. The take then gathers every job due in the
   * half after it, so delayed jobs due one after another are started in
   * batches instead of one per take and start statement, each still at least
   * half the look-ahead early. A doorbell heard since the fetch began
   * (`ringsBefore` differs) means work arrived meanwhile, maybe due sooner:
   * the queue then stays ready. With nothing delayed either, the queue leaves
   * the shared active set.
   */
  async markDrained(name: string, ringsBefore: number, nextDelayedAt: number | null): Promise<void> {
    if (this.ringsHeard(name) !== ringsBefore) return;
    if (nextDelayedAt !== null) {
      this.emptyUntil.set(name, this.gatherAt(nextDelayedAt));
      return;
    }
    this.emptyUntil.set(name, Number.POSITIVE_INFINITY);
    try {
      await this.retireIfEmpty(name, ringsBefore);
    } catch (error) {
      // Left ready, the queue is fetched once more, comes up empty again and retires then: nothing is lost.
      this.emptyUntil.delete(name);
      throw error;
    }
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
   * SADD after, so counting the queue's jobs after our SREM closes the race: a
   * job added in between is counted here and the queue goes back in. One
   * connection runs its commands in order, so on a standalone Redis the SREM
   * and the count go in one pipeline; a Redis Cluster keeps no order between
   * the set's node and the queue's, so there the SREM is awaited first.
   */
  private async retireIfEmpty(name: string, ringsBefore: number): Promise<void> {
    const base = `${this.keys.prefix}:${name}`;
    const recount = this.redis.pipeline();
    if (this.redis.isCluster) await this.redis.srem(this.keys.activeQueues, name);
    else recount.srem(this.keys.activeQueues, name);
    recount.llen(`${base}:wait`).zcard(`${base}:prioritized`).zcard(`${base}:delayed`);
    // The last three replies are the counts (an SREM sent along comes first).
    const pending = (await execPipeline(recount)).slice(-3).reduce<number>((sum, n) => sum + (typeof n === "number" ? n : 0), 0);
    if (pending > 0) {
      await this.redis.sadd(this.keys.activeQueues, name);
      this.emptyUntil.delete(name);
    } else if (this.ringsHeard(name) === ringsBefore) {
      // A doorbell heard meanwhile put the queue back (its SADD follows our SREM): it stays.
      this.members.delete(name);
      this.emptyUntil.delete(name);
    }
  }
}
