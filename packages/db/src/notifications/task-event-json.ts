import type { Priority, TaskStatus } from "@tasklane/core";
import type { TaskRecord } from "../tasks/task-record.js";

/**
 * The contract's `Task` fields as webhook and callback bodies carry them
 * (attemptHistory aside: receivers get the outcome, the console has the history).
 * Times are ISO-8601 UTC with milliseconds, like the API.
 */
export interface TaskEventJson {
  id: string;
  type: string;
  queue: string;
  payload: unknown;
  status: TaskStatus;
  priority: Priority;
  runAt: string;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  attempts: number;
  maxAttempts: number;
  result: unknown;
  lastError: string | null;
  idempotencyKey: string | null;
  orderingKey: string | null;
  workflowId: string | null;
  scheduleId: string | null;
  cancelRequested: boolean;
}

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

export function taskEventJson(t: TaskRecord): TaskEventJson {
  return {
    id: t.id,
    type: t.type,
    queue: t.queueName,
    payload: t.payload,
    status: t.status,
    priority: t.priority,
    runAt: t.runAt.toISOString(),
    createdAt: t.createdAt.toISOString(),
    startedAt: iso(t.startedAt),
    completedAt: iso(t.completedAt),
    attempts: t.attempts,
    maxAttempts: t.maxAttempts,
    result: t.result,
    lastError: t.lastError,
    idempotencyKey: t.idempotencyKey,
    orderingKey: t.orderingKey,
    workflowId: t.workflowId,
    scheduleId: t.scheduleId,
    cancelRequested: t.cancelRequested,
  };
}
