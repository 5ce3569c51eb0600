/**
 * The JSON envelope of webhook deliveries and callbacks (contract header:
 * {"type", "timestamp", "data"}).
 */
import { assertNever } from "./assert-never.js";
import { TaskStatus } from "./statuses.js";

export const EventType = {
  /** A task reached SUCCEEDED. */
  TASK_SUCCEEDED: "task.succeeded",
  /** A task reached DEAD. */
  TASK_DEAD: "task.dead",
  /** A task reached CANCELLED. */
  TASK_CANCELLED: "task.cancelled",
  /** A task reached SKIPPED. */
  TASK_SKIPPED: "task.skipped",
  /** A workflow reached any terminal status; data.workflow says which. */
  WORKFLOW_COMPLETED: "workflow.completed",
} as const;
export type EventType = (typeof EventType)[keyof typeof EventType];

/** Every event type, for validating webhook subscriptions. */
export const EVENT_TYPES: readonly EventType[] = Object.values(EventType);

/** Subscribes a webhook to every event type. */
export const ALL_EVENTS_FILTER = "*";

/** Only terminal statuses produce events; progress is on the subscription, not webhooks. */
export function eventTypeForTerminalStatus(status: TaskStatus): EventType | null {
  switch (status) {
    case TaskStatus.SUCCEEDED:
      return EventType.TASK_SUCCEEDED;
    case TaskStatus.DEAD:
      return EventType.TASK_DEAD;
    case TaskStatus.CANCELLED:
      return EventType.TASK_CANCELLED;
    case TaskStatus.SKIPPED:
      return EventType.TASK_SKIPPED;
    case TaskStatus.SCHEDULED:
    case TaskStatus.BLOCKED:
    case TaskStatus.QUEUED:
    case TaskStatus.RUNNING:
    case TaskStatus.RETRYING:
      return null;
    default:
      return assertNever(status);
  }
}

export interface EventEnvelope {
  type: EventType;
  /** ISO-8601, UTC, millisecond precision. */
  timestamp: string;
  data: Record<string, unknown>;
}

export function buildEnvelope(type: EventType, data: Record<string, unknown>, at: Date): EventEnvelope {
  return { type, timestamp: at.toISOString(), data };
}

export function matchesEventFilter(filters: readonly string[], type: EventType): boolean {
  return filters.includes(ALL_EVENTS_FILTER) || filters.includes(type);
}
