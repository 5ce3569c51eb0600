import { execPipeline, type RedisClient } from "./connection.js";
import { withinFastPathWait } from "./dispatch-after-commit.js";
import type { KeySpace } from "./naming.js";

/**
 * Publishes each id on `channel`, best effort, for a caller that has
 * committed and owes its own caller an answer: skipped at once while the
 * client is not connected (ioredis would hold the PUBLISH in its offline
 * queue until Redis is back, one per call for the length of an outage),
 * otherwise waited for at most FAST_PATH_WAIT_MS (a connection that died
 * unnoticed), then left to finish alone. Pub/sub keeps nothing for a
 * subscriber that was cut off, so every listener must have another way to
 * learn what it missed (`fallback` says which). Resolves false when skipped;
 * throws what Redis answered, or FastPathTimeout.
 */
export async function publishBestEffort(redis: RedisClient, channel: string, ids: readonly string[], what: string, fallback: string): Promise<boolean> {
  if (ids.length === 0 || redis.status !== "ready") return false;
  const pipeline = redis.pipeline();
  for (const id of ids) pipeline.publish(channel, id);
  await withinFastPathWait(execPipeline(pipeline), what, fallback);
  return true;
}

/**
 * Tells every worker process that these tasks were cancelled while RUNNING,
 * so the one executing a PUSH attempt aborts its request (publishBestEffort).
 * Missing it costs no correctness: a PUSH attempt not aborted runs to its
 * answer or its timeout and its outcome is refused (the task is CANCELLED in
 * Postgres); a PULL worker learns it from its next heartbeat (cancelRequested).
 */
export function announceCancellations(redis: RedisClient, keys: KeySpace, taskIds: string[]): Promise<boolean> {
  return publishBestEffort(redis, keys.cancelChannel, taskIds, "the cancel announcement", "workers learn it from their attempt's outcome or heartbeat");
}
