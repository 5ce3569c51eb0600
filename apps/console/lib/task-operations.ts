/** The task page's operations: what its buttons send, and what the page says once one is done. */
export const TASK_OPERATION_DONE = {
  cancel: "Task cancelled.",
  redrive: "Task redriven: it is queued again with a fresh attempt budget.",
  discard: "Task discarded: it left the dead-letter queue.",
} as const;

export type TaskOperationName = keyof typeof TASK_OPERATION_DONE;

export function isTaskOperationName(value: unknown): value is TaskOperationName {
  return isKeyOf(TASK_OPERATION_DONE, value);
}

/** What the task page says after its "Run now" or "Reschedule" (tasks/reschedule-actions.ts sends it there with ?rescheduled=). */
export const RESCHEDULED_NOTICES = {
  now: "Task due now: it runs as soon as a worker is free.",
  later: "Task rescheduled: it runs at its new time.",
} as const;

export type RescheduledNotice = keyof typeof RESCHEDULED_NOTICES;

/** The notices that say when the task runs, for a task whose queue is paused: no worker takes it until the queue is resumed. */
export const PAUSED_QUEUE_NOTICES = {
  now: "Task due now, but its queue is paused: it runs once the queue is resumed.",
  later: "Task rescheduled, but its queue is paused: it runs at its new time only if the queue is resumed by then.",
  redrive: "Task redriven with a fresh attempt budget, but its queue is paused: it runs once the queue is resumed.",
} as const;

/** Whether the notice for these parameters says when the task runs, which its queue being paused changes (the page then reads the queue). */
export function noticeDependsOnQueue(done: unknown, rescheduled: unknown): boolean {
  return done === "redrive" || (!isTaskOperationName(done) && isKeyOf(RESCHEDULED_NOTICES, rescheduled));
}

/** What the task page says for its ?done= (its buttons' operations) or ?rescheduled= parameter, if either names one. */
export function taskPageNotice(done: unknown, rescheduled: unknown, queuePaused = false): string | undefined {
  if (isTaskOperationName(done)) return queuePaused && done === "redrive" ? PAUSED_QUEUE_NOTICES.redrive : TASK_OPERATION_DONE[done];
  if (isKeyOf(RESCHEDULED_NOTICES, rescheduled)) return (queuePaused ? PAUSED_QUEUE_NOTICES : RESCHEDULED_NOTICES)[rescheduled];
  return undefined;
}

/** A search parameter naming one of `record`'s own keys (never an inherited one such as "constructor"). */
function isKeyOf<T extends object>(record: T, value: unknown): value is keyof T {
  return typeof value === "string" && Object.hasOwn(record, value);
}
