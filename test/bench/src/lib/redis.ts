import { existsSync } from "node:fs";
import { Redis } from "ioredis";
import type { WatchedProcess } from "./system.js";

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

let serverPid: number | undefined;

/**
 * Finds the local redis-server's pid (INFO server), once per run, so the
 * systems that keep their queues in Redis (Tasklane, BullMQ) are charged for
 * the CPU their scripts cost there, as the Postgres-based ones are for their
 * backends. Left out when Redis is not on this machine.
 */
export async function resolveRedisServerPid(): Promise<void> {
  const redis = new Redis(BENCH_REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    const pid = Number(/process_id:(\d+)/.exec(await redis.info("server"))?.[1]);
    serverPid = Number.isInteger(pid) && existsSync(`/proc/${pid}/stat`) ? pid : undefined;
  } finally {
    redis.disconnect();
  }
}

export const REDIS_LABEL = "Redis (server)";

/** The Redis server as a watched process, when resolveRedisServerPid found it. */
export function redisServerProcess(): WatchedProcess[] {
  return serverPid === undefined ? [] : [{ label: REDIS_LABEL, pid: serverPid }];
}
