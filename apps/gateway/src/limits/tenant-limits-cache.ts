/**
 * A tenant's API rate limits, read from its row and kept for at most TTL_MS:
 * one query per tenant per second per gateway at most, and a limit changed by
 * updateTenant is in force everywhere within a second (contract: "Limit
 * changes take effect within 1 s"). Concurrent misses share one query; a
 * failed read is not kept.
 */
import type { Database } from "@tasklane/db";
import { LRUCache } from "lru-cache";

export interface ApiLimits {
  ratePerSecond: number;
  burst: number;
}

/** Contract: limit changes take effect within 1 s. */
const TTL_MS = 1_000;
/** Bounds memory when very many tenants call within one TTL. */
const MAX_ENTRIES = 50_000;

export class TenantLimitsCache {
  /** A tenant that no longer exists is kept too (as null limits): it is asked about again and again. */
  readonly #limits: LRUCache<string, { limits: ApiLimits | null }>;

  constructor(db: Database) {
    this.#limits = new LRUCache({
      max: MAX_ENTRIES,
      ttl: TTL_MS,
      fetchMethod: async (tenantId) => {
        const res = await db.pool.query<{ rate: number; burst: number }>(
          "SELECT api_rate_per_second AS rate, api_burst AS burst FROM tenants WHERE id = $1",
          [tenantId],
        );
        const row = res.rows[0];
        return { limits: row === undefined ? null : { ratePerSecond: row.rate, burst: row.burst } };
      },
    });
  }

  /** Null when the tenant no longer exists. */
  async get(tenantId: string): Promise<ApiLimits | null> {
    return (await this.#limits.fetch(tenantId))?.limits ?? null;
  }
}
