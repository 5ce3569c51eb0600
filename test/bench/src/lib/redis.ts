import { Redis } from "ioredis";

/**
 * Redis DB 15 belongs to the bench alone (test/helpers/redis-dbs.ts lists the
 * indexes the test suite owns): each scenario FLUSHDBs it before use.
 */
export const BENCH_REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379/15";

/** A connection as BullMQ wants it (no per-command retry limit). */
export const benchRedis = (): Redis => new Redis(BENCH_REDIS_URL, { maxRetriesPerRequest: null });

export async function flushBenchRedis(): Promise<void> {
  const redis = new Redis(BENCH_REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    await redis.flushdb();
  } finally {
    redis.disconnect();
  }
}

export async function redisVersion(): Promise<string> {
  const redis = new Redis(BENCH_REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    return /redis_version:(\S+)/.exec(await redis.info("server"))?.[1] ?? "unknown";
  } finally {
    redis.disconnect();
  }
}
