import { EventType, IdPrefix, WorkflowStatus, buildEnvelope, matchesEventFilter, newId } from "@tasklane/core";
import type { WorkflowRecord } from "../workflows/workflow-record.js";
import type { NotifyEvent, PlannedDelivery, WebhookTarget } from "./plan-deliveries.js";

/** The contract's Workflow scalar fields, as workflow.completed bodies carry them (data.workflow). */
export interface WorkflowEventJson {
  id: string;
  name: string;
  status: WorkflowStatus;
  createdAt: string;
  completedAt: string | null;
}

export function workflowEventJson(w: WorkflowRecord): WorkflowEventJson {
  return { id: w.id, name: w.name, status: w.status, createdAt: w.createdAt.toISOString(), completedAt: w.completedAt?.toISOString() ?? null };
}

const STATUSES = new Set<string>(Object.values(WorkflowStatus));

/**
 * The finished workflow a NOTIFY row is about, with the status its transition
 * recorded (workflow-progress.ts / cancel-workflow.ts write
 * `{event: "workflow.completed", workflowId, status}`); null for task events.
 */
export function workflowEventOf(ev: NotifyEvent): { workflowId: string; status: WorkflowStatus } | null {
  const p = ev.payload;
  if (ev.taskId !== null || typeof p !== "object" || p === null) return null;
  if (!("event" in p) || p.event !== EventType.WORKFLOW_COMPLETED || !("workflowId" in p) || !("status" in p)) return null;
  const { workflowId, status } = p;
  return typeof workflowId === "string" && typeof status === "string" && STATUSES.has(status) ? { workflowId, status: status as WorkflowStatus } : null;
}

/** One delivery per webhook of the workflow's tenant subscribed to workflow.completed (workflows have no callbackUrl). */
export function planWorkflowDeliveries(
  events: readonly NotifyEvent[],
  workflows: ReadonlyMap<string, WorkflowRecord>,
  webhooksByTenant: ReadonlyMap<string, readonly WebhookTarget[]>,
): PlannedDelivery[] {
  const planned: PlannedDelivery[] = [];
  for (const ev of events) {
    const about = workflowEventOf(ev);
    const workflow = about === null ? undefined : workflows.get(about.workflowId);
    if (about === null || workflow === undefined) continue;
    const type = EventType.WORKFLOW_COMPLETED;
    // The status the transition recorded, like task events: the event is about that moment.
    const body = JSON.stringify(buildEnvelope(type, { workflow: { ...workflowEventJson(workflow), status: about.status } }, ev.createdAt));
    for (const hook of webhooksByTenant.get(workflow.tenantId) ?? []) {
      if (!matchesEventFilter(hook.events, type)) continue;
      planned.push({ id: newId(IdPrefix.delivery), tenantId: workflow.tenantId, webhookId: hook.id, url: hook.url, event: type, taskId: null, workflowId: workflow.id, body });
    }
  }
  return planned;
}
