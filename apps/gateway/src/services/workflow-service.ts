/**
 * Workflows (DAGs of tasks): validated specs in, storage and every status
 * change in packages/db. After a commit it runs the same post-commit steps as
 * task submission: the dispatch fast path (its failure is only logged, the
 * outbox delivers anyway), pull doorbells, and cancel announcements.
 */
import type { BulkRead, BulkReadAllowance, WorkflowSpec } from "@tasklane/core";
import {
  cancelWorkflow,
  countWorkflowTasks,
  getWorkflow,
  listWorkflowTasks,
  listWorkflows,
  submitWorkflow,
  withTenantScope,
  type Database,
  type DispatchIntent,
  type SubmitWorkflowResult,
  type WorkflowRecord,
  type WorkflowTaskRecord,
} from "@tasklane/db";
import { TaskAttr, newTaskTrace, withFastPathSpans } from "@tasklane/observability";
import type { Logger } from "../observability/logger.js";

export interface WorkflowServiceDeps {
  db: Database;
  log: Logger;
  horizonMs: number;
  /** The post-commit fast path; a failure goes to `onError` (else it is logged), never thrown: the outbox delivers. */
  dispatch(intents: DispatchIntent[], onError?: (error: unknown) => void): Promise<void>;
  /** Wakes long-polling pull workers of these queues. */
  ringPullQueues(queueIds: string[]): Promise<void>;
  /** Tells the executor of a RUNNING task to stop (PUSH abort); best effort, heartbeats also report it. */
  announceCancel(taskId: string): Promise<void>;
  /** Platform protection, as for submitTask: a workflow's tasks join the same backlog (up to 2,000 at once). */
  backlog?: { assertAccepting(tenantId: string, newTasks: number): void };
}

export class WorkflowService {
  constructor(private readonly deps: WorkflowServiceDeps) {}

  async submit(tenantId: string, spec: WorkflowSpec, actor: string, traceParent: string | null = null): Promise<SubmitWorkflowResult> {
    this.deps.backlog?.assertAccepting(tenantId, spec.tasks.length);
    // Each workflow task gets its own trace (a child of the caller's traceparent, if it sent one).
    const newTraceParent = () => newTaskTrace("task.submit", traceParent, { [TaskAttr.tenantId]: tenantId });
    const result = await submitWorkflow(this.deps.db, tenantId, spec, { horizonMs: this.deps.horizonMs, actor, newTraceParent });
    if (!result.created) return result;
    await withFastPathSpans(
      "task.dispatch",
      result.dispatch,
      (onError) => this.deps.dispatch(result.dispatch, onError),
      (error: unknown) => this.deps.log.warn({ err: error, count: result.dispatch.length }, "post-commit dispatch failed; the outbox will deliver"),
    );
    const pushed = new Set(result.dispatch.map((i) => i.queueId));
    const pulled = result.tasks.filter((t) => t.task.status === "QUEUED" && !pushed.has(t.task.queueId)).map((t) => t.task.queueId);
    await this.deps.ringPullQueues([...new Set(pulled)]).catch((error: unknown) => this.deps.log.warn({ err: error }, "could not ring pull workers"));
    return result;
  }

  async cancel(tenantId: string, id: string, actor: string): Promise<WorkflowRecord> {
    const { workflow, wasRunning } = await cancelWorkflow(this.deps.db, tenantId, id, actor);
    await Promise.all(
      wasRunning.map((taskId) =>
        this.deps.announceCancel(taskId).catch((error: unknown) => this.deps.log.warn({ err: error, taskId }, "could not announce cancellation")),
      ),
    );
    return workflow;
  }

  // Reads run confined to the caller's tenant (row-level security), like task reads.
  get(tenantId: string, id: string): Promise<WorkflowRecord | null> {
    return withTenantScope(this.deps.db.pool, tenantId, (client) => getWorkflow({ pool: client }, tenantId, id));
  }

  list(tenantId: string, page: { first: number; after: string | null }): Promise<WorkflowRecord[]> {
    return withTenantScope(this.deps.db.pool, tenantId, (client) => listWorkflows({ pool: client }, tenantId, page));
  }

  /** The workflows' tasks, within what the answer has `left` (core's answer-budget.ts). */
  tasks(tenantId: string, workflowIds: string[], left: BulkReadAllowance): Promise<BulkRead<Map<string, WorkflowTaskRecord[]>>> {
    return withTenantScope(this.deps.db.pool, tenantId, (client) => listWorkflowTasks({ pool: client }, tenantId, workflowIds, left));
  }

  taskCounts(tenantId: string, workflowIds: string[]): Promise<Map<string, number>> {
    return withTenantScope(this.deps.db.pool, tenantId, (client) => countWorkflowTasks({ pool: client }, tenantId, workflowIds));
  }
}
