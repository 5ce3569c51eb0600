import type { WorkflowStatus } from "@tasklane/core";
import type { TaskRecord } from "../tasks/task-record.js";

export interface WorkflowRecord {
  id: string;
  tenantId: string;
  name: string;
  status: WorkflowStatus;
  idempotencyKey: string | null;
  createdAt: Date;
  completedAt: Date | null;
}

/** One task of a workflow with its place in the graph. */
export interface WorkflowTaskRecord {
  key: string;
  /** Keys of the tasks it waits for, sorted. */
  dependsOn: string[];
  task: TaskRecord;
}

export const WORKFLOW_COLUMNS = "w.id, w.tenant_id, w.name, w.status, w.idempotency_key, w.created_at, w.completed_at";

export function mapWorkflowRow(r: Record<string, unknown>): WorkflowRecord {
  return {
    id: r.id as string,
    tenantId: r.tenant_id as string,
    name: r.name as string,
    status: r.status as WorkflowStatus,
    idempotencyKey: (r.idempotency_key as string | null) ?? null,
    createdAt: r.created_at as Date,
    completedAt: (r.completed_at as Date | null) ?? null,
  };
}
