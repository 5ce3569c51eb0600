import type { TaskEventMessage } from "@tasklane/queue";
import type { HubEvent } from "../event-hub.js";

/** Event `n` (its id, and its time in ms) of one tenant's task, with no task to load. */
export function hubEvent(n: number, taskId = "task_a"): HubEvent {
  const message: TaskEventMessage = {
    eventId: String(n),
    taskId,
    tenantId: "ten_1",
    queueId: "que_1",
    workflowId: null,
    from: null,
    to: "QUEUED",
    at: new Date(n).toISOString(),
  };
  return { message, task: async () => null };
}
