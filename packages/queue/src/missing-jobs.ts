import { connectionLost, watchConnection, type RedisClient } from "./connection.js";
import { jobIdFor, type KeySpace } from "./naming.js";
import { luaScript } from "./scripts/load-scripts.js";
import { groupByBullQueue } from "./task-dispatcher.js";

/** Positions (0-based) in the job ids asked about. */
export interface MissingJobs {
  /** Jobs not in Redis at all. */
  gone: number[];
  /** Jobs taken the old way (BullMQ's moveToActive) whose lock has expired: their taker is gone. */
  orphaned: number[];
  /** Jobs whose hash is there but in no list a worker takes from (their set was lost): nobody would ever take them. */
  stranded: number[];
}

interface FindCommand {
  tasklaneFindMissingJobs(numberOfKeys: number, ...keysThenPrefix: string[]): Promise<[number[], number[], number[]]>;
}

/**
 * Checks which of a queue's jobs are missing from Redis, for the
 * reconciler's sweep, in one script call (scripts/find-missing-jobs.lua).
 * The pipeline it replaced (EXISTS, HEXISTS processedOn and EXISTS lock per
 * job) cost the scheduler ~55 ms of CPU for each page of 2,000 tasks, with a
 * deep backlog once a second; the script costs it ~1 ms and Redis half of
 * what the pipeline did.
 */
export class MissingJobFinder {
  private readonly redis: RedisClient & FindCommand;

  constructor(
    redis: RedisClient,
    private readonly keys: KeySpace,
  ) {
    if (!("tasklaneFindMissingJobs" in redis)) redis.defineCommand("tasklaneFindMissingJobs", { lua: luaScript("find-missing-jobs") });
    watchConnection(redis);
    this.redis = redis as RedisClient & FindCommand;
  }

  async find(bullQueueName: string, jobIds: string[]): Promise<MissingJobs> {
    if (jobIds.length === 0) return { gone: [], orphaned: [], stranded: [] };
    // A check of up to a page of keys would wait in ioredis's offline queue for the outage's length
    // (connectionLost); the caller tries again later (the reconciler's next tick, a resumed queue's: the sweep).
    if (connectionLost(this.redis)) throw new Error(`Redis is ${this.redis.status}; missing jobs cannot be checked now`);
    const base = `${this.keys.prefix}:${bullQueueName}`;
    const [gone, orphaned, stranded] = await this.redis.tasklaneFindMissingJobs(
      3 + jobIds.length,
      `${base}:wait`,
      `${base}:prioritized`,
      `${base}:delayed`,
      ...jobIds.map((id) => this.keys.jobKey(bullQueueName, id)),
      `${base}:`,
    );
    // Lua counts from 1.
    const positions = (list: number[]) => list.map((i) => i - 1);
    return { gone: positions(gone), orphaned: positions(orphaned), stranded: positions(stranded) };
  }

  /**
   * The tasks among `intents` whose jobs are not in Redis at all, one script
   * call per BullMQ queue. Orphaned and stranded jobs are left to the
   * reconciler, which removes them before re-adding.
   */
  async goneOf<T extends { tenantId: string; queueId: string; taskId: string; dispatchGeneration: number }>(intents: readonly T[]): Promise<T[]> {
    const gone = await Promise.all(
      [...groupByBullQueue(this.keys, intents)].map(async ([name, group]) => {
        const found = await this.find(name, group.map((i) => jobIdFor(i.taskId, i.dispatchGeneration)));
        return found.gone.map((k) => group[k] as T);
      }),
    );
    return gone.flat();
  }
}
