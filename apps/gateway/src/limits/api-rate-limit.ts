/**
 * The per-tenant API rate limit (token bucket: apiRatePerSecond refill,
 * apiBurst capacity), checked once per HTTP request before anything runs.
 *
 * Documented choice: a batched request (array body) costs one token per
 * operation and is admitted or refused WHOLE. A 429 then always means that
 * nothing ran, so a client may retry the whole batch without executing any
 * mutation twice (partial admission would answer 429 for a batch whose first
 * operations already submitted tasks). A batch larger than the tenant's burst
 * could never be admitted and is refused as BAD_USER_INPUT instead.
 *
 * Tokens come from this gateway's allotment when it holds one
 * (api-token-allotments.ts), else from the bucket in Redis.
 *
 * Operator calls and anonymous requests take no tenant bucket (the latter
 * fail authentication anyway). When Redis is unreachable the limit fails
 * open: Postgres, not Redis, is what must keep accepting work.
 */
import { BadUserInputError, RateLimitedError } from "@tasklane/core";
import type { ApiTokenBuckets, TakeOutcome, RedisClient } from "@tasklane/queue";
import type { GraphQLError } from "graphql";
import type { Principal } from "../auth/principal.js";
import { toGraphQLError } from "../graphql/errors.js";
import type { Logger } from "../observability/logger.js";
import type { GatewayMetrics } from "../observability/metrics.js";
import { ApiTokenAllotments } from "./api-token-allotments.js";
import type { ApiLimits, TenantLimitsCache } from "./tenant-limits-cache.js";

/** A Redis that answers slower than this is treated as unavailable for this request. */
const BUCKET_TIMEOUT_MS = 1_000;
/** One warning per interval at most while failing open. */
const WARN_INTERVAL_MS = 10_000;

export interface ApiRateLimitDeps {
  buckets: ApiTokenBuckets;
  limits: TenantLimitsCache;
  redis: RedisClient;
  metrics: GatewayMetrics;
  log: Logger;
}

/** How many GraphQL operations an HTTP body holds (a batch is an array). */
export function operationCount(body: unknown): number {
  return Array.isArray(body) ? Math.max(1, body.length) : 1;
}

export class ApiRateLimit {
  #lastWarning = 0;
  readonly #allotments = new ApiTokenAllotments();
  readonly #refills = new Map<string, Promise<TakeOutcome | null>>();

  constructor(private readonly deps: ApiRateLimitDeps) {}

  /** Resolves when the request may run; otherwise throws the GraphQLError to answer with (429 + Retry-After). */
  async admit(principal: Principal, operations: number): Promise<void> {
    if (principal.kind !== "tenant") return;
    const limits = await this.deps.limits.get(principal.tenantId);
    if (limits === null) return;
    if (operations > limits.burst) {
      throw toGraphQLError(new BadUserInputError(`This batch of ${operations} operations exceeds the API burst of ${limits.burst}; send smaller batches`));
    }
    const { tenantId } = principal;
    const extra = ApiTokenAllotments.extraFor(limits);
    // One refill at a time per tenant: calls arriving while one is under way wait for it, and ask
    // the bucket for their own tokens only. Each taking an allotment of its own held back from
    // the tenant more than its burst (some of 50 concurrent calls refused under the default limits).
    const refill = extra > 0 ? this.#refills.get(tenantId) : undefined;
    if (refill !== undefined) await refill;
    const local = this.#allotments.take(tenantId, limits, operations);
    if (local.admitted) return;
    const need = operations - local.held;
    const want = refill === undefined ? need + extra : need;
    const taking = this.#take(tenantId, limits, need, want);
    if (want > need) this.#refills.set(tenantId, taking);
    const outcome = await taking.finally(() => {
      if (this.#refills.get(tenantId) === taking) this.#refills.delete(tenantId);
    });
    if (outcome?.admitted) return this.#allotments.keep(tenantId, limits, outcome.taken - need);
    // Refused, or admitted unlimited while Redis is away: what the allotment held is still ours.
    this.#allotments.keep(tenantId, limits, local.held);
    if (outcome === null) return;
    this.deps.metrics.rateLimited.inc({ kind: "api" });
    throw refusal(outcome.retryAfterMs);
  }

  async #take(tenantId: string, limits: ApiLimits, cost: number, want: number): Promise<TakeOutcome | null> {
    // ioredis queues commands while disconnected (maxRetriesPerRequest: null); do not wait for a reconnect.
    if (this.deps.redis.status !== "ready") return this.#failOpen(new Error(`redis is ${this.deps.redis.status}`));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), BUCKET_TIMEOUT_MS);
    });
    try {
      const outcome = await Promise.race([this.deps.buckets.take(tenantId, limits, cost, want), timeout]);
      return outcome === "timeout" ? this.#failOpen(new Error("token bucket timed out")) : outcome;
    } catch (error: unknown) {
      return this.#failOpen(error);
    } finally {
      clearTimeout(timer);
    }
  }

  #failOpen(error: unknown): null {
    const now = Date.now();
    if (now - this.#lastWarning >= WARN_INTERVAL_MS) {
      this.#lastWarning = now;
      this.deps.log.warn({ err: error }, "API rate limit unavailable; admitting requests unlimited");
    }
    return null;
  }
}

function refusal(retryAfterMs: number): GraphQLError {
  return toGraphQLError(new RateLimitedError(retryAfterMs / 1000));
}
