/** The contract's enums as the console shows them. Shared by server and client components (no I/O). */
export const TASK_STATUSES = ["SCHEDULED", "BLOCKED", "QUEUED", "RUNNING", "RETRYING", "SUCCEEDED", "DEAD", "CANCELLED", "SKIPPED"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const CANCELLABLE: readonly TaskStatus[] = ["SCHEDULED", "BLOCKED", "QUEUED", "RUNNING", "RETRYING"];

export const WORKFLOW_STATUSES = ["RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"] as const;
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];

export const PRIORITIES = ["HIGH", "NORMAL", "LOW"] as const;
export type Priority = (typeof PRIORITIES)[number];

export const MISFIRE_POLICIES = ["SKIP", "FIRE_ONCE", "CATCH_UP"] as const;
export const OVERLAP_POLICIES = ["ALLOW", "SKIP", "QUEUE", "CANCEL_RUNNING"] as const;
export type MisfirePolicy = (typeof MISFIRE_POLICIES)[number];
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

export const API_KEY_SCOPES = [
  { value: "full", label: "Full", hint: "everything, including keys, queues, schedules and webhooks" },
  { value: "submit", label: "Submit", hint: "submit, cancel and redrive tasks; read everything" },
  { value: "worker", label: "Worker", hint: "pull-worker calls: lease, heartbeat, complete, fail" },
  { value: "read", label: "Read", hint: "queries and subscriptions only" },
] as const;

/** WebhookDeliveryStatus, the delivery log's filter. */
export const DELIVERY_STATUSES = ["PENDING", "DELIVERED", "FAILED"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const WEBHOOK_EVENTS = ["task.succeeded", "task.dead", "task.cancelled", "task.skipped", "workflow.completed"] as const;

/** Badge tone per status: colour is never the only signal, the text is always shown. */
export type Tone = "neutral" | "info" | "progress" | "success" | "danger" | "warning" | "muted";

export function toneOf(status: string): Tone {
  switch (status) {
    case "SUCCEEDED":
    case "DELIVERED":
      return "success";
    case "DEAD":
    case "FAILED":
    case "TIMED_OUT":
    case "LEASE_EXPIRED":
      return "danger";
    case "RETRYING":
    case "PENDING":
      return "warning";
    case "RUNNING":
      return "progress";
    case "QUEUED":
    case "SCHEDULED":
    case "BLOCKED":
      return "info";
    case "CANCELLED":
    case "SKIPPED":
      return "muted";
    default:
      return "neutral";
  }
}
