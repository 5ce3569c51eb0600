/**
 * A tenant's API rate limits, read from its row and kept for at most TTL_MS:
 * one query per tenant per second per gateway at most, and a limit changed by
 * updateTenant is in force everywhere within a second (contract: "Limit
 * changes take effect within 1 s"). Concurrent misses share one query.
 */
import type { Database } from "@tasklane/db";

export interface ApiLimits {
  ratePerSecond: number;
  burst: number;
}

/** Contract: limit changes take effect within 1 s. */
const TTL_MS = 1_000;
/** Bounds memory when very many tenants call within one TTL. */
const MAX_ENTRIES = 50_000;

interface Entry {
  limits: Promise<ApiLimits | null>;
  expiresAt: number;
}

export class TenantLimitsCache {
  readonly #entries = new Map<string, Entry>();

  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {}

  /** Null when the tenant no longer exists. */
  get(tenantId: string): Promise<ApiLimits | null> {
    const now = this.now();
    const cached = this.#entries.get(tenantId);
    if (cached !== undefined && cached.expiresAt > now) return cached.limits;
    if (this.#entries.size >= MAX_ENTRIES) this.#evictExpired(now);
    const limits = this.#load(tenantId);
    this.#entries.set(tenantId, { limits, expiresAt: now + TTL_MS });
    // A failed read is not cached: the next request asks again.
    limits.catch(() => this.#entries.delete(tenantId));
    return limits;
  }

  async #load(tenantId: string): Promise<ApiLimits | null> {
    const res = await this.db.pool.query<{ rate: number; burst: number }>(
      "SELECT api_rate_per_second AS rate, api_burst AS burst FROM tenants WHERE id = $1",
      [tenantId],
    );
    const row = res.rows[0];
    return row === undefined ? null : { ratePerSecond: row.rate, burst: row.burst };
  }

  #evictExpired(now: number): void {
    for (const [key, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(key);
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
  }
}
