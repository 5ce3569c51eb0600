import type { RedisClient } from "./connection.js";
import type { KeySpace } from "./naming.js";
import { luaScript } from "./scripts/load-scripts.js";
import type { TaskJobData } from "./task-job.js";

export interface TakenJob {
  id: string;
  data: TaskJobData;
}

interface TakeCommand {
  tasklaneTakeJobs(waitKey: string, prioritizedKey: string, delayedKey: string, counterKey: string, jobKeyPrefix: string, now: number, max: number): Promise<string[]>;
}

/**
 * Takes a worker's jobs out of one BullMQ queue in one script call
 * (scripts/take-jobs.lua): up to `max` of the queue's runnable jobs, due
 * delayed ones included, in BullMQ's order, deleted from Redis as they are
 * returned. The caller starts their tasks in Postgres next; a crash in between
 * leaves waiting tasks without jobs, which the reconciler adds again.
 */
export class JobTaker {
  private readonly redis: RedisClient & TakeCommand;

  constructor(
    redis: RedisClient,
    private readonly keys: KeySpace,
  ) {
    if (!("tasklaneTakeJobs" in redis)) redis.defineCommand("tasklaneTakeJobs", { numberOfKeys: 4, lua: luaScript("take-jobs") });
    this.redis = redis as RedisClient & TakeCommand;
  }

  async take(bullQueueName: string, max: number, now = Date.now()): Promise<TakenJob[]> {
    if (max <= 0) return [];
    const base = `${this.keys.prefix}:${bullQueueName}`;
    const flat = await this.redis.tasklaneTakeJobs(`${base}:wait`, `${base}:prioritized`, `${base}:delayed`, `${base}:pc`, `${base}:`, now, max);
    const jobs: TakenJob[] = [];
    for (let i = 0; i < flat.length; i += 2) jobs.push({ id: flat[i] as string, data: JSON.parse(flat[i + 1] as string) as TaskJobData });
    return jobs;
  }
}
