import { Redis, type RedisOptions } from "ioredis";

/** Options BullMQ needs on every connection it uses. */
export function createRedis(url: string, name: string, extra: RedisOptions = {}): Redis {
  return new Redis(url, {
    connectionName: name,
    // BullMQ requires this; commands wait for the connection instead of failing after N retries.
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (times) => Math.min(times * 100, 2_000),
    ...extra,
  });
}
