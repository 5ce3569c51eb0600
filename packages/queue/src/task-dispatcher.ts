import type { RedisClient } from "./connection.js";
import { priorityRank } from "@tasklane/core";
import type { DispatchIntent } from "@tasklane/db";
import { jobIdFor, type KeySpace } from "./naming.js";
import { luaScript } from "./scripts/load-scripts.js";
import type { TaskJobData } from "./task-job.js";

export interface TaskDispatcher {
  /** Places each task's current dispatch generation in its queue (delayed until runAt). Idempotent. */
  dispatch(intents: DispatchIntent[]): Promise<void>;
}

/** Intents by BullMQ queue name: one queue's keys share one Redis Cluster slot, so each group may go in one pipeline or script. */
export function groupByBullQueue<T extends Pick<DispatchIntent, "tenantId" | "queueId">>(keys: KeySpace, intents: readonly T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const intent of intents) {
    const name = keys.bullQueueName(intent.tenantId, intent.queueId);
    const list = groups.get(name);
    if (list) list.push(intent);
    else groups.set(name, [intent]);
  }
  return groups;
}

interface AddJobsCommand {
  tasklaneAddJobs(prioritizedKey: string, delayedKey: string, counterKey: string, jobKeyPrefix: string, now: number, ...jobs: (string | number)[]): Promise<number>;
}

/** Jobs per script call: a bigger dispatch (a reconciler pass) is split so one call never holds Redis long. */
const JOBS_PER_CALL = 1000;

/**
 * Adds jobs with one script call per tenant queue (scripts/add-jobs.lua, in
 * BullMQ's layout), then marks the queues active and rings the doorbell so
 * idle workers look at once.
 */
export function createTaskDispatcher(redis: RedisClient, keys: KeySpace): TaskDispatcher {
  if (!("tasklaneAddJobs" in redis)) redis.defineCommand("tasklaneAddJobs", { numberOfKeys: 3, lua: luaScript("add-jobs") });
  const commands = redis as RedisClient & AddJobsCommand;
  const addJobs = async (name: string, intents: DispatchIntent[], now: number) => {
    const base = `${keys.prefix}:${name}`;
    for (let from = 0; from < intents.length; from += JOBS_PER_CALL) {
      const args: (string | number)[] = [];
      for (const i of intents.slice(from, from + JOBS_PER_CALL)) {
        const lane = priorityRank(i.priority);
        const data: TaskJobData = { taskId: i.taskId, tenantId: i.tenantId, queueId: i.queueId, dispatchGeneration: i.dispatchGeneration, lane };
        args.push(jobIdFor(i.taskId, i.dispatchGeneration), JSON.stringify(data), lane, Math.max(0, i.runAt.getTime() - now));
      }
      await commands.tasklaneAddJobs(`${base}:prioritized`, `${base}:delayed`, `${base}:pc`, `${base}:`, now, ...args);
    }
  };
  return {
    async dispatch(intents) {
      if (intents.length === 0) return;
      const groups = groupByBullQueue(keys, intents);
      const now = Date.now();
      await Promise.all([...groups].map(([name, list]) => addJobs(name, list, now)));
      const names = [...groups.keys()];
      const pipeline = redis.pipeline();
      pipeline.sadd(keys.activeQueues, ...names);
      for (const name of names) pipeline.publish(keys.doorbellChannel, name);
      await pipeline.exec();
    },
  };
}
