/**
 * Clears a deleted queue's BullMQ queue out of Redis. A deleted queue has no
 * task left, so whatever is still there is garbage: cancelled tasks' jobs
 * (purgeQueue leaves them to be dropped when taken, which a paused queue's
 * are not) and its empty keys. Left behind, a queue name in the active set
 * that no worker's directory knows is looked at again and again, each time
 * asking for a directory reload (fair-fetcher.ts, UNKNOWN_REASK_MS).
 *
 * The keys are the ones add-jobs.lua and take-jobs.lua use (packages/queue):
 * the wait list, the prioritized and delayed sets, the priority counter and a
 * hash per job under "<prefix>:<queue>:". All share the tenant's hash tag, so
 * the script is legal on a Redis Cluster. It removes a chunk of jobs per call,
 * so Redis is never held for long however many jobs there were.
 */
import type { KeySpace, RedisClient } from "@tasklane/queue";

/** Jobs removed per script call. */
const CHUNK = 1000;

/**
 * KEYS[1] wait list, KEYS[2] prioritized zset, KEYS[3] delayed zset, KEYS[4] priority counter.
 * ARGV[1] the job key prefix, ARGV[2] most jobs to remove.
 * Returns how many jobs it removed; 0 once the queue is empty (its keys then deleted).
 */
const CLEAR_QUEUE_LUA = `
local prefix = ARGV[1]
local max = tonumber(ARGV[2])
local removed = 0
local ids = redis.call("LRANGE", KEYS[1], 0, max - 1)
if #ids > 0 then
  redis.call("LTRIM", KEYS[1], #ids, -1)
end
for _, zset in ipairs({ KEYS[2], KEYS[3] }) do
  if #ids < max then
    local more = redis.call("ZRANGE", zset, 0, max - #ids - 1)
    if #more > 0 then
      redis.call("ZREM", zset, unpack(more))
      for _, id in ipairs(more) do ids[#ids + 1] = id end
    end
  end
end
for _, id in ipairs(ids) do
  redis.call("DEL", prefix .. id)
  removed = removed + 1
end
if removed == 0 then
  redis.call("DEL", KEYS[1], KEYS[2], KEYS[3], KEYS[4])
end
return removed`;

interface ClearCommand {
  tasklaneClearDeletedQueue(numberOfKeys: number, ...keysThenArgs: (string | number)[]): Promise<number>;
}

export class DeletedQueueJobs {
  private readonly redis: RedisClient & ClearCommand;

  constructor(
    redis: RedisClient,
    private readonly keys: KeySpace,
  ) {
    if (!("tasklaneClearDeletedQueue" in redis)) redis.defineCommand("tasklaneClearDeletedQueue", { lua: CLEAR_QUEUE_LUA });
    this.redis = redis as RedisClient & ClearCommand;
  }

  /** Removes every job and key of the queue, then its name from the active set. */
  async clear(tenantId: string, queueId: string): Promise<void> {
    const name = this.keys.bullQueueName(tenantId, queueId);
    const base = `${this.keys.prefix}:${name}`;
    while ((await this.redis.tasklaneClearDeletedQueue(4, `${base}:wait`, `${base}:prioritized`, `${base}:delayed`, `${base}:pc`, `${base}:`, CHUNK)) > 0);
    await this.redis.srem(this.keys.activeQueues, name);
  }
}
