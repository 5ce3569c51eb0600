import type { RedisClient } from "./connection.js";
import type { KeySpace } from "./naming.js";

/**
 * Tells every worker process that these tasks were cancelled while RUNNING,
 * so the one executing a PUSH attempt aborts its request. Best effort: the
 * cancel is already recorded in Postgres and any later outcome is refused.
 */
export async function publishCancellations(redis: RedisClient, keys: KeySpace, taskIds: string[]): Promise<void> {
  if (taskIds.length === 0) return;
  const pipeline = redis.pipeline();
  for (const id of taskIds) pipeline.publish(keys.cancelChannel, id);
  await pipeline.exec();
}
