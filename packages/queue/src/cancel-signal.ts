import { execPipeline, type RedisClient } from "./connection.js";
import { withinFastPathWait } from "./dispatch-after-commit.js";
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

/**
 * publishCancellations for a request that has committed its cancel and owes
 * its caller the answer: skipped at once while the client is not connected
 * (ioredis would hold the PUBLISH in its offline queue until Redis is back,
 * and a Redis outage would pile up one per cancel), otherwise waited for at
 * most FAST_PATH_WAIT_MS (a connection that died unnoticed), then left to
 * finish alone. Missing it costs no correctness: a PUSH attempt not aborted
 * runs to its answer or its timeout and its outcome is refused (the task is
 * CANCELLED in Postgres); a PULL worker learns it from its next heartbeat
 * (cancelRequested). While Redis is unreachable the workers' subscribers are
 * cut off too, and pub/sub keeps nothing for them, so they could not have
 * heard it anyway. Resolves false when skipped; throws what Redis answered,
 * or FastPathTimeout.
 */
export async function announceCancellations(redis: RedisClient, keys: KeySpace, taskIds: string[]): Promise<boolean> {
  if (taskIds.length === 0 || redis.status !== "ready") return false;
  const pipeline = redis.pipeline();
  for (const id of taskIds) pipeline.publish(keys.cancelChannel, id);
  await withinFastPathWait(execPipeline(pipeline), "the cancel announcement", "workers learn it from their attempt's outcome or heartbeat");
  return true;
}
