import { Queue } from "bullmq";
import type { RedisClient } from "./connection.js";
import { priorityRank } from "@tasklane/core";
import type { DispatchIntent } from "@tasklane/db";
import { jobIdFor, type KeySpace } from "./naming.js";
import type { TaskJobData } from "./task-job.js";

export interface TaskDispatcher {
  /** Places each task's current dispatch generation in its queue (delayed until runAt). Idempotent. */
  dispatch(intents: DispatchIntent[]): Promise<void>;
  close(): Promise<void>;
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

/**
 * Adds jobs with addBulk, one call per tenant queue, then marks the queues
 * active and rings the doorbell so idle workers look at once.
 */
export function createTaskDispatcher(redis: RedisClient, keys: KeySpace): TaskDispatcher {
  const queues = new Map<string, Queue<TaskJobData>>();
  const queueFor = (name: string) => {
    let q = queues.get(name);
    if (!q) {
      q = new Queue<TaskJobData>(name, { connection: redis, prefix: keys.prefix });
      queues.set(name, q);
    }
    return q;
  };
  return {
    async dispatch(intents) {
      if (intents.length === 0) return;
      const groups = groupByBullQueue(keys, intents);
      const now = Date.now();
      await Promise.all(
        [...groups].map(async ([name, list]) => {
          await queueFor(name).addBulk(
            list.map((i) => ({
              name: "task",
              data: {
                taskId: i.taskId,
                tenantId: i.tenantId,
                queueId: i.queueId,
                dispatchGeneration: i.dispatchGeneration,
                lane: priorityRank(i.priority),
              },
              opts: {
                jobId: jobIdFor(i.taskId, i.dispatchGeneration),
                priority: priorityRank(i.priority),
                delay: Math.max(0, i.runAt.getTime() - now),
                removeOnComplete: true,
                removeOnFail: true,
                attempts: 1,
              },
            })),
          );
        }),
      );
      const names = [...groups.keys()];
      const pipeline = redis.pipeline();
      pipeline.sadd(keys.activeQueues, ...names);
      for (const name of names) pipeline.publish(keys.doorbellChannel, name);
      await pipeline.exec();
    },
    async close() {
      await Promise.all([...queues.values()].map((q) => q.close()));
      queues.clear();
    },
  };
}
