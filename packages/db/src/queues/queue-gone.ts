/**
 * A task insert that names a queue deleteQueue is deleting waits for the
 * deletion's row lock in its key check (tasks -> queues), and once the
 * deletion commits that check fails: pg's foreign_key_violation on the key.
 * Nothing was written; to the caller the queue simply does not exist, as it
 * would have been a moment later: NOT_FOUND, like any unknown queue name
 * (without this the race answered INTERNAL_SERVER_ERROR). As a typed error it
 * also lets the gateway's submission coalescer run the other requests merged
 * with it on their own.
 */
import { NotFoundError } from "@tasklane/core";

/** The tasks' composite key to their queue (migration task_queue_tenant_key). */
const TASK_QUEUE_KEY = "tasks_tenant_id_queue_id_fkey";
const FOREIGN_KEY_VIOLATION = "23503";

export function isQueueGone(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const code = "code" in error ? error.code : undefined;
  const constraint = "constraint" in error ? error.constraint : undefined;
  return code === FOREIGN_KEY_VIOLATION && constraint === TASK_QUEUE_KEY;
}

/** `work`, with a queue deleted under it answered as NOT_FOUND (named when the inserts name one queue). */
export async function queueGoneAsNotFound<T>(work: () => Promise<T>, queueNames: () => readonly string[]): Promise<T> {
  try {
    return await work();
  } catch (error: unknown) {
    if (!isQueueGone(error)) throw error;
    // Read only on the refusal: the submission's hot path pays nothing for it.
    const names = [...new Set(queueNames())];
    throw new NotFoundError("Queue", names.length === 1 ? names[0] : undefined);
  }
}
