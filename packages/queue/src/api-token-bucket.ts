import type { RedisClient } from "./connection.js";
import type { KeySpace } from "./naming.js";
import { luaScript } from "./scripts/load-scripts.js";

export type TakeOutcome = { admitted: true; tokensLeft: number; taken: number } | { admitted: false; retryAfterMs: number };

interface BucketCommands {
  tasklaneApiBucket(bucketKey: string, ratePerSecond: number, burst: number, cost: number, want: number): Promise<[number, number, number?]>;
}

function hasBucketCommand(redis: RedisClient): redis is RedisClient & BucketCommands {
  return "tasklaneApiBucket" in redis;
}

/**
 * Per-tenant API token buckets in Redis (scripts/token-bucket.lua): one atomic
 * script call per request, Redis's clock, keys hash-tagged per tenant so a
 * cluster keeps each bucket on its tenant's slot. A tenant at its limit is
 * refused at once; nobody waits, so it never slows another tenant.
 */
export class ApiTokenBuckets {
  private readonly redis: RedisClient & BucketCommands;

  constructor(
    redis: RedisClient,
    private readonly keys: KeySpace,
  ) {
    if (!hasBucketCommand(redis)) redis.defineCommand("tasklaneApiBucket", { numberOfKeys: 1, lua: luaScript("token-bucket") });
    if (!hasBucketCommand(redis)) throw new Error("ioredis did not define tasklaneApiBucket");
    this.redis = redis;
  }

  /**
   * Takes `cost` tokens (1 ≤ cost ≤ burst) from the tenant's bucket, all or
   * none, and as many more as it holds up to `want` in all.
   */
  async take(tenantId: string, limits: { ratePerSecond: number; burst: number }, cost: number, want: number): Promise<TakeOutcome> {
    const [admitted, value, taken] = await this.redis.tasklaneApiBucket(this.keys.apiBucket(tenantId), limits.ratePerSecond, limits.burst, cost, want);
    return admitted === 1 ? { admitted: true, tokensLeft: value, taken: taken ?? cost } : { admitted: false, retryAfterMs: value };
  }
}
