import type { ChainableCommander } from "ioredis";
import { connectionLost, execPipeline, watchConnection, type RedisClient } from "./connection.js";
import { doorbellMessage } from "./doorbell.js";
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

/** add-jobs.lua's keys (prioritized zset, delayed zset, priority counter), the job key prefix, now, the doorbell's channel and message, then four values per job. */
type AddJobsArgs = [
  prioritizedKey: string,
  delayedKey: string,
  counterKey: string,
  jobKeyPrefix: string,
  now: number,
  doorbellChannel: string,
  doorbell: string,
  ...jobs: (string | number)[],
];

interface AddJobsCommand {
  tasklaneAddJobs(...args: AddJobsArgs): Promise<number>;
}

/** Jobs per script call: a bigger dispatch (a reconciler pass) is split so one call never holds Redis long. */
const JOBS_PER_CALL = 1000;

/**
 * Adds jobs with one script call per tenant queue (scripts/add-jobs.lua, in
 * BullMQ's layout, which then rings the doorbell so idle workers look at
 * once), then marks the queues active. On a standalone Redis all of it goes
 * in one pipeline, a round trip less before the submission is answered: one
 * connection runs its commands in order, so the SADD lands after the jobs, as
 * a worker retiring a drained queue needs (active-queues.ts). Should ioredis
 * have to resend a script Redis lost (SCRIPT FLUSH), it does so outside the
 * pipeline and the SADD may land first; the doorbell the script rings after
 * its jobs then brings the queue back. A cluster spreads the queues over
 * nodes that keep no order between them, so there the scripts are awaited
 * first.
 */
export function createTaskDispatcher(redis: RedisClient, keys: KeySpace): TaskDispatcher {
  if (!("tasklaneAddJobs" in redis)) redis.defineCommand("tasklaneAddJobs", { numberOfKeys: 3, lua: luaScript("add-jobs") });
  watchConnection(redis);
  /** The script calls that add one queue's jobs: each call's arguments, keys first. */
  const addJobsCalls = (name: string, intents: DispatchIntent[], now: number): AddJobsArgs[] => {
    const base = `${keys.prefix}:${name}`;
    const calls: AddJobsArgs[] = [];
    for (let from = 0; from < intents.length; from += JOBS_PER_CALL) {
      const jobs: (string | number)[] = [];
      let earliestDelay = Number.POSITIVE_INFINITY;
      for (const i of intents.slice(from, from + JOBS_PER_CALL)) {
        const lane = priorityRank(i.priority);
        const data: TaskJobData = { taskId: i.taskId, tenantId: i.tenantId, queueId: i.queueId, dispatchGeneration: i.dispatchGeneration, lane };
        const delay = Math.max(0, i.runAt.getTime() - now);
        earliestDelay = Math.min(earliestDelay, delay);
        jobs.push(jobIdFor(i.taskId, i.dispatchGeneration), JSON.stringify(data), lane, delay);
      }
      // The ring names the earliest due time when every job of the call is delayed (doorbell.ts).
      const ring = doorbellMessage({ queueName: name, dueAt: earliestDelay === 0 ? null : now + earliestDelay });
      calls.push([`${base}:prioritized`, `${base}:delayed`, `${base}:pc`, `${base}:`, now, keys.doorbellChannel, ring, ...jobs]);
    }
    return calls;
  };
  return {
    async dispatch(intents) {
      if (intents.length === 0) return;
      // Lost: the jobs would wait in ioredis's offline queue for as long as the outage lasts, one more
      // batch per write, and flood Redis when it is back. Their tasks are QUEUED in Postgres with their
      // outbox rows, which the scheduler's dispatcher delivers once Redis answers (and the reconciler's
      // sweep re-adds whatever has no row). A first connection still being made is waited for.
      if (connectionLost(redis)) throw new Error(`Redis is ${redis.status}; the outbox will deliver the dispatch`);
      const groups = groupByBullQueue(keys, intents);
      const now = Date.now();
      const calls = [...groups].map(([name, list]) => addJobsCalls(name, list, now));
      if (redis.isCluster) {
        const commands = redis as RedisClient & AddJobsCommand;
        await Promise.all(calls.map(async (queueCalls) => {
          for (const args of queueCalls) await commands.tasklaneAddJobs(...args);
        }));
        await redis.sadd(keys.activeQueues, ...groups.keys());
        return;
      }
      const pipeline = redis.pipeline() as ChainableCommander & { tasklaneAddJobs(...args: AddJobsArgs): ChainableCommander };
      for (const args of calls.flat()) pipeline.tasklaneAddJobs(...args);
      pipeline.sadd(keys.activeQueues, ...groups.keys());
      await execPipeline(pipeline);
    },
  };
}
