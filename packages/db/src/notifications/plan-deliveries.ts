import { IdPrefix, TaskStatus, buildEnvelope, eventTypeForTerminalStatus, matchesEventFilter, newId } from "@tasklane/core";
import type { TaskRecord } from "../tasks/task-record.js";
import { taskEventJson } from "./task-event-json.js";

/** One claimed NOTIFY outbox row: a task reached a terminal status. */
export interface NotifyEvent {
  tenantId: string;
  taskId: string | null;
  /** `{status}` as the transition wrote it; the status the event is about. */
  payload: unknown;
  /** When the transition committed; the envelope's timestamp. */
  createdAt: Date;
}

/** An enabled, non-deleted webhook endpoint of a tenant. */
export interface WebhookTarget {
  id: string;
  tenantId: string;
  url: string;
  events: string[];
}

/** A webhook_deliveries row to insert. */
export interface PlannedDelivery {
  id: string;
  tenantId: string;
  /** Null for the task's callbackUrl. */
  webhookId: string | null;
  url: string;
  event: string;
  /** Null for workflow.completed (plan-workflow-deliveries.ts). */
  taskId: string | null;
  workflowId: string | null;
  /** Exactly what is signed and sent on every attempt. */
  body: string;
}

const STATUSES = new Set<string>(Object.values(TaskStatus));

/**
 * The status the transition recorded. The task row may have moved on since
 * (a redrive of a DEAD task), and the event is about the transition, not now.
 */
function eventStatus(payload: unknown, fallback: TaskStatus): TaskStatus {
  if (typeof payload === "object" && payload !== null && "status" in payload) {
    const s = payload.status;
    if (typeof s === "string" && STATUSES.has(s)) return s as TaskStatus;
  }
  return fallback;
}

/**
 * Pure fan-out: one delivery per matching webhook of the task's tenant plus
 * one for the task's callbackUrl. Events whose task is gone, or whose status
 * is not terminal, produce nothing. The delivery id doubles as the
 * webhook-id header, so it is minted once here and never again.
 */
export function planDeliveries(
  events: readonly NotifyEvent[],
  tasks: ReadonlyMap<string, TaskRecord>,
  webhooksByTenant: ReadonlyMap<string, readonly WebhookTarget[]>,
): PlannedDelivery[] {
  const planned: PlannedDelivery[] = [];
  for (const ev of events) {
    const task = ev.taskId === null ? undefined : tasks.get(ev.taskId);
    if (task === undefined) continue;
    const type = eventTypeForTerminalStatus(eventStatus(ev.payload, task.status));
    if (type === null) continue;
    const body = JSON.stringify(buildEnvelope(type, { task: taskEventJson(task) }, ev.createdAt));
    const base = { tenantId: task.tenantId, event: type, taskId: task.id, workflowId: null, body };
    for (const hook of webhooksByTenant.get(task.tenantId) ?? []) {
      if (matchesEventFilter(hook.events, type)) planned.push({ ...base, id: newId(IdPrefix.delivery), webhookId: hook.id, url: hook.url });
    }
    if (task.callbackUrl !== null) planned.push({ ...base, id: newId(IdPrefix.delivery), webhookId: null, url: task.callbackUrl });
  }
  return planned;
}
