import type { RedisClient } from "./connection.js";
import type { KeySpace } from "./naming.js";
import { luaScript } from "./scripts/load-scripts.js";

interface DropCommand {
  tasklaneDropTakenJobs(activeKey: string, jobKeyPrefix: string, token: string, ...jobIds: string[]): Promise<number>;
}

/**
 * Removes jobs a worker took from a BullMQ queue (getNextJob, under a lock
 * token) once it is about to start their tasks in Postgres: one script call
 * per queue and wave (scripts/drop-taken-jobs.lua).
 */
export class TakenJobs {
  private readonly redis: RedisClient & DropCommand;

  constructor(
    redis: RedisClient,
    private readonly keys: KeySpace,
  ) {
    if (!("tasklaneDropTakenJobs" in redis)) redis.defineCommand("tasklaneDropTakenJobs", { numberOfKeys: 1, lua: luaScript("drop-taken-jobs") });
    this.redis = redis as RedisClient & DropCommand;
  }

  /** Drops the given jobs of one BullMQ queue that are still locked by `token`; resolves with how many were. */
  async drop(bullQueueName: string, token: string, jobIds: string[]): Promise<number> {
    if (jobIds.length === 0) return 0;
    const base = `${this.keys.prefix}:${bullQueueName}`;
    return this.redis.tasklaneDropTakenJobs(`${base}:active`, `${base}:`, token, ...jobIds);
  }
}
