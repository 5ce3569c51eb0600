/**
 * Tokens this gateway has taken from tenants' API buckets ahead of need. A
 * call's token bucket is a Redis script call: 60–110 µs of gateway CPU and a
 * round trip on every request, more than a third of what a `{ __typename }`
 * costs (test/bench/findings.md). A gateway that finds a tenant's bucket
 * able to give more than a call needs takes an allotment, a twentieth of a
 * second of the tenant's rate, and admits the next calls from it.
 *
 * The limit never loosens: every admitted call's tokens were taken from the
 * shared bucket. What it costs is timing: tokens in one gateway's allotment
 * are not there for another's calls, so across gateways a tenant at its limit
 * may be refused up to one allotment per gateway early. An allotment is
 * kept for at most a second and only under the limits it was taken with, so
 * a lowered limit holds within the second the limits cache already allows.
 * Small limits (under 20 calls a second) get no allotment and stay exact.
 */
import type { ApiLimits } from "./tenant-limits-cache.js";

/** An allotment lasts this long: limit changes take effect within 1 s (contract). */
const ALLOTMENT_TTL_MS = 1_000;
/** An allotment is this much of the tenant's rate... */
const ALLOTMENT_SECONDS = 0.05;
/** ...and at most this share of its burst, so one gateway never holds most of a burst. */
const ALLOTMENT_BURST_SHARE = 0.25;
/** Past this many tenants holding allotments, expired ones are swept on the next grant. */
const SWEEP_ABOVE = 10_000;

interface Allotment {
  tokens: number;
  limits: ApiLimits;
  expiresAt: number;
}

export class ApiTokenAllotments {
  readonly #held = new Map<string, Allotment>();

  constructor(private readonly now: () => number = Date.now) {}

  /** How many tokens beyond a call's own to ask the bucket for (0: this tenant's limits stay exact). */
  static extraFor(limits: ApiLimits): number {
    return Math.floor(Math.min(limits.ratePerSecond * ALLOTMENT_SECONDS, limits.burst * ALLOTMENT_BURST_SHARE));
  }

  /**
   * Takes `cost` tokens from the tenant's allotment when it holds them (under
   * these limits, unexpired). Otherwise takes nothing and answers how many it
   * gave up instead: what it held, to count toward the call at the bucket.
   */
  take(tenantId: string, limits: ApiLimits, cost: number): { admitted: true } | { admitted: false; held: number } {
    const allotment = this.#live(tenantId, limits);
    if (allotment === undefined) return { admitted: false, held: 0 };
    if (allotment.tokens >= cost) {
      allotment.tokens -= cost;
      if (allotment.tokens === 0) this.#held.delete(tenantId);
      return { admitted: true };
    }
    this.#held.delete(tenantId);
    return { admitted: false, held: allotment.tokens };
  }

  /** Keeps `tokens` taken from the bucket beyond a call's own (added to what is held under the same limits). */
  keep(tenantId: string, limits: ApiLimits, tokens: number): void {
    if (tokens <= 0) return;
    const now = this.now();
    if (this.#held.size > SWEEP_ABOVE) for (const [id, a] of this.#held) if (a.expiresAt <= now) this.#held.delete(id);
    const live = this.#live(tenantId, limits);
    if (live !== undefined) live.tokens += tokens;
    else this.#held.set(tenantId, { tokens, limits, expiresAt: now + ALLOTMENT_TTL_MS });
  }

  #live(tenantId: string, limits: ApiLimits): Allotment | undefined {
    const allotment = this.#held.get(tenantId);
    if (allotment === undefined) return undefined;
    const same = allotment.limits.ratePerSecond === limits.ratePerSecond && allotment.limits.burst === limits.burst;
    if (same && allotment.expiresAt > this.now()) return allotment;
    this.#held.delete(tenantId);
    return undefined;
  }
}
