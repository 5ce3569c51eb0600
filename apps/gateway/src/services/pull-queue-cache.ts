/**
 * What leaseTasks needs to know of a queue (its id, mode, concurrency limits
 * and start rate), kept for at most TTL_MS per gateway. Every lease call of
 * every worker began with this read; on a loaded machine each round trip to
 * Postgres costs milliseconds of the lease's latency, and a PULL worker's
 * throughput is its slots divided by that latency. Changes made through this
 * gateway apply at once (forget); on another instance within TTL_MS, as for
 * the tenant's own limits (contract: "Limit changes take effect within 1 s").
 * A queue that does not exist is not remembered, so one created a moment
 * later is leasable at once. Concurrent misses share one read.
 */
import { readPullQueue, type Database, type PullQueue } from "@tasklane/db";

const TTL_MS = 1_000;
/** Bounds memory when very many queues are leased from within one TTL. */
const MAX_ENTRIES = 50_000;

interface Entry {
  queue: Promise<PullQueue | null>;
  expiresAt: number;
}

export class PullQueueCache {
  readonly #entries = new Map<string, Entry>();

  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {}

  /** The tenant's queue of that name as read at most TTL_MS ago; null when it has none. */
  get(tenantId: string, name: string): Promise<PullQueue | null> {
    const key = keyOf(tenantId, name);
    const now = this.now();
    const cached = this.#entries.get(key);
    if (cached !== undefined && cached.expiresAt > now) return cached.queue;
    if (this.#entries.size >= MAX_ENTRIES) this.#evictExpired(now);
    const queue = readPullQueue(this.db, tenantId, name);
    const entry = { queue, expiresAt: now + TTL_MS };
    this.#entries.set(key, entry);
    const drop = () => {
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
    };
    // Neither a missing queue nor a failed read is remembered: the next call asks again.
    queue.then((found) => found ?? drop(), drop);
    return queue;
  }

  /** After a change to the queue on this instance: the next lease reads it afresh. */
  forget(tenantId: string, name: string): void {
    this.#entries.delete(keyOf(tenantId, name));
  }

  #evictExpired(now: number): void {
    for (const [key, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(key);
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
  }
}

/** Tenant ids never contain "/", so the key is unambiguous whatever the queue's name. */
function keyOf(tenantId: string, name: string): string {
  return `${tenantId}/${name}`;
}
