import { IdPrefix, TaskStatus, buildEnvelope, eventTypeForTerminalStatus, matchesEventFilter, newId } from "@tasklane/core";
import type { TaskRecord } from "../tasks/task-record.js";
import { taskEventJson } from "./task-event-json.js";

/** One claimed NOTIFY outbox row: a task reached a terminal status. */
export interface NotifyEvent {
  tenantId: string;
  taskId: string | null;
  /**
   * As the transition wrote it: the status the event is about, and the fields
   * a redrive changes (sql-fragments.ts notifyOutboxInsert). Rows written
   * before those were added carry the status alone.
   */
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

const dateOr = (value: unknown, fallback: Date | null): Date | null =>
  value === null ? null : typeof value === "string" && !Number.isNaN(Date.parse(value)) ? new Date(value) : fallback;

/**
 * The task as the transition left it. The row may have moved on since (a DEAD
 * task redriven, even run again, before the fan-out), and the event is about
 * the transition, not now: what a redrive changes comes from the payload.
 */
export function taskAtEvent(payload: unknown, task: TaskRecord): TaskRecord {
  if (typeof payload !== "object" || payload === null) return task;
  const p = payload as Record<string, unknown>;
  const status = typeof p.status === "string" && STATUSES.has(p.status) ? (p.status as TaskStatus) : task.status;
  if (status === task.status && !("attempts" in p)) return task;
  return {
    ...task,
    status,
    attempts: typeof p.attempts === "number" ? p.attempts : task.attempts,
    runAt: dateOr(p.runAt, task.runAt) ?? task.runAt,
    startedAt: "startedAt" in p ? dateOr(p.startedAt, task.startedAt) : task.startedAt,
    completedAt: "completedAt" in p ? dateOr(p.completedAt, task.completedAt) : task.completedAt,
    lastError: "lastError" in p && (p.lastError === null || typeof p.lastError === "string") ? p.lastError : task.lastError,
    // Only a DEAD task is redriven, and it had no result; one it has now came later.
    result: status === task.status ? task.result : null,
  };
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
    const current = ev.taskId === null ? undefined : tasks.get(ev.taskId);
    if (current === undefined) continue;
    const task = taskAtEvent(ev.payload, current);
    const type = eventTypeForTerminalStatus(task.status);
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
