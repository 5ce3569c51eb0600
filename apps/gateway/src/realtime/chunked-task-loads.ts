/**
 * The tasks of a catch-up page's events, read a chunk at a time as the
 * subscription sends them. Read one per event, as live events are (each has
 * its own moment), two resumed feeds of 5,100 events each took 15.7 s, ~1.5 ms
 * an event for its tenant-scoped read (BEGIN, SET, SELECT, COMMIT); a read of
 * the next TASKS_PER_READ events' tasks costs about what one did, and the same
 * two feeds took 3.0 s. Only the chunk being sent is held: a page's 500 tasks
 * read at once would be up to 500 bodies of 256 KiB per subscription.
 */
import type { TaskRecord } from "@tasklane/db";

export const TASKS_PER_READ = 32;

/** The tenant's tasks among `ids`, by id; absent ones are not in the map. */
export type TasksReader = (tenantId: string, ids: readonly string[]) => Promise<Map<string, TaskRecord>>;

/**
 * For events sent in order: `taskOf(i)` is the task of the i-th event (the
 * task as it is when its chunk is read, null when it is gone). The events
 * come in chunks of `perRead`; the first ask of a chunk reads all its tasks
 * at once and lets go of the chunk before.
 */
export function chunkedTaskLoads(
  tenantId: string,
  taskIds: readonly string[],
  read: TasksReader,
  perRead = TASKS_PER_READ,
): (index: number) => Promise<TaskRecord | null> {
  let held: { chunk: number; tasks: Promise<Map<string, TaskRecord>> } | undefined;
  return async (index) => {
    const chunk = Math.floor(index / perRead);
    if (held?.chunk !== chunk) held = { chunk, tasks: read(tenantId, taskIds.slice(chunk * perRead, (chunk + 1) * perRead)) };
    return (await held.tasks).get(taskIds[index] ?? "") ?? null;
  };
}
