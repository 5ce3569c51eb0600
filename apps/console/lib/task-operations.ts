/** The task page's operations: what its buttons send, and what the page says once one is done. */
export const TASK_OPERATION_DONE = {
  cancel: "Task cancelled.",
  redrive: "Task redriven: it is queued again with a fresh attempt budget.",
  discard: "Task discarded: it left the dead-letter queue.",
} as const;

export type TaskOperationName = keyof typeof TASK_OPERATION_DONE;

export function isTaskOperationName(value: unknown): value is TaskOperationName {
  return typeof value === "string" && Object.hasOwn(TASK_OPERATION_DONE, value);
}
