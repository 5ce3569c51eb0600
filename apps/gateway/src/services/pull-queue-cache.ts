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
import { LRUCache } from "lru-cache";

const TTL_MS = 1_000;
/** Bounds memory when very many queues are leased from within one TTL. */
const MAX_ENTRIES = 50_000;

export class PullQueueCache {
  readonly #queues: LRUCache<string, PullQueue, { tenantId: string; name: string }>;

  constructor(db: Database) {
    this.#queues = new LRUCache({
      max: MAX_ENTRIES,
      ttl: TTL_MS,
      // undefined (no such queue) is not cached; neither is a failed read (the next call asks again).
      fetchMethod: async (_key, _stale, { context }) => (await readPullQueue(db, context.tenantId, context.name)) ?? undefined,
    });
  }

  /** The tenant's queue of that name as read at most TTL_MS ago; null when it has none. */
  async get(tenantId: string, name: string): Promise<PullQueue | null> {
    return (await this.#queues.fetch(keyOf(tenantId, name), { context: { tenantId, name } })) ?? null;
  }

  /** After a change to the queue on this instance: the next lease reads it afresh. */
  forget(tenantId: string, name: string): void {
    this.#queues.delete(keyOf(tenantId, name));
  }
}

/** Tenant ids never contain "/", so the key is unambiguous whatever the queue's name. */
function keyOf(tenantId: string, name: string): string {
  return `${tenantId}/${name}`;
}
