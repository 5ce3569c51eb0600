import type { RedisClient } from "./connection.js";
import type { KeySpace } from "./naming.js";
import { luaScript } from "./scripts/load-scripts.js";
import type { TaskJobData } from "./task-job.js";

export interface TakenJob {
  id: string;
  data: TaskJobData;
}

/** One take from one queue. */
export interface Take {
  jobs: TakenJob[];
  /** The queue ran out of runnable jobs before the take had all it wanted. */
  drained: boolean;
  /** When drained: when its next delayed job falls due (ms since the epoch), or null when it has none. */
  nextDelayedAt: number | null;
}

interface TakeCommand {
  tasklaneTakeJobs(
    waitKey: string,
    prioritizedKey: string,
    delayedKey: string,
    counterKey: string,
    jobKeyPrefix: string,
    now: number,
    max: number,
  ): Promise<[flat: string[], drained: number, nextDelayedScore: string | null]>;
}

/**
 * Takes a worker's jobs out of one BullMQ queue in one script call
 * (scripts/take-jobs.lua): up to `max` of the queue's runnable jobs, due
 * delayed ones included, in BullMQ's order, deleted from Redis as they are
 * returned. The caller starts their tasks in Postgres next; a crash in between
 * leaves waiting tasks without jobs, which the reconciler adds again. A take
 * that drains the queue says so, and when its next delayed job is due, in the
 * same reply: what the worker needs to know before it looks at the queue again.
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

  async take(bullQueueName: string, max: number, now = Date.now()): Promise<Take> {
    if (max <= 0) return { jobs: [], drained: false, nextDelayedAt: null };
    const base = `${this.keys.prefix}:${bullQueueName}`;
    const [flat, drained, nextDelayedScore] = await this.redis.tasklaneTakeJobs(`${base}:wait`, `${base}:prioritized`, `${base}:delayed`, `${base}:pc`, `${base}:`, now, max);
    const jobs: TakenJob[] = [];
    for (let i = 0; i < flat.length; i += 2) jobs.push({ id: flat[i] as string, data: JSON.parse(flat[i + 1] as string) as TaskJobData });
    return {
      jobs,
      drained: drained === 1,
      // BullMQ scores delayed jobs as due ms * 0x1000 + a counter.
      nextDelayedAt: nextDelayedScore === null ? null : Math.floor(Number(nextDelayedScore) / 0x1000),
    };
  }
}
