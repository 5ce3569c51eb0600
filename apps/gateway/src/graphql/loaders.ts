/**
 * Per-request DataLoaders: a list of 500 tasks asking for attemptHistory, or
 * every queue asking for stats, costs one query instead of one per row.
 */
import DataLoader from "dataloader";
import { AnswerBudget } from "@tasklane/core";
import type { AttemptRecord, TaskAuditEventRecord, TaskRecord, WorkflowTaskRecord } from "@tasklane/db";
import type { QueueService, QueueStatsCounts } from "../services/queue-service.js";
import type { ScheduleService } from "../services/schedule-service.js";
import type { TaskService } from "../services/task-service.js";
import type { WorkflowService } from "../services/workflow-service.js";

/** Workflow tasks are read for the caller's tenant only, so the tenant is part of the key. */
export interface WorkflowTasksKey {
  tenantId: string;
  workflowId: string;
}

export interface RequestLoaders {
  readonly attempts: DataLoader<string, AttemptRecord[]>;
  readonly queueStats: DataLoader<string, QueueStatsCounts>;
  /**
   * Workflow.tasks. With scheduleRuns, within one AnswerBudget per request
   * (core's answer-budget.ts): 10,000 task rows, 4 MiB of payloads and results.
   */
  readonly workflowTasks: DataLoader<WorkflowTasksKey, WorkflowTaskRecord[], string>;
  readonly workflowTaskCounts: DataLoader<WorkflowTasksKey, number, string>;
  /** The request's AnswerBudget, for reads that spend it without a loader (tasks and deadLetterTasks pages). */
  answerBudget(): AnswerBudget;
  /** Schedule.runs: one loader per (tenant, first) asked for, so a list of schedules costs one query. */
  scheduleRuns(tenantId: string, first: number): DataLoader<string, TaskRecord[]>;
  /** Task.events: one loader per (tenant, page) asked for, so a list of tasks costs one query. */
  taskEvents(tenantId: string, first: number, after: string | null): DataLoader<string, TaskAuditEventRecord[]>;
  /** Task.replayOf: one loader per tenant, so a list of tasks costs one query (tasks.replay_of is read by no other path). */
  replayOf(tenantId: string): DataLoader<string, string | null>;
  /** Forgets every cached row (a subscription's context outlives one event). */
  clearAll(): void;
}

/**
 * Every loader, map and the answer budget are made on first use: most
 * requests (submit, lease, complete) use none, and each would be made and
 * dropped per call.
 */
export function createLoaders(services: { tasks: TaskService; queues: QueueService; workflows: WorkflowService; schedules: ScheduleService }): RequestLoaders {
  let eventLoaders: Map<string, DataLoader<string, TaskAuditEventRecord[]>> | undefined;
  let runLoaders: Map<string, DataLoader<string, TaskRecord[]>> | undefined;
  let replayLoaders: Map<string, DataLoader<string, string | null>> | undefined;
  let budget: AnswerBudget | undefined;
  let attempts: DataLoader<string, AttemptRecord[]> | undefined;
  let queueStats: DataLoader<string, QueueStatsCounts> | undefined;
  let workflowTasks: DataLoader<WorkflowTasksKey, WorkflowTaskRecord[], string> | undefined;
  let workflowTaskCounts: DataLoader<WorkflowTasksKey, number, string> | undefined;
  const answerBudget = () => (budget ??= new AnswerBudget());
  return {
    clearAll() {
      eventLoaders = runLoaders = replayLoaders = budget = attempts = queueStats = workflowTasks = workflowTaskCounts = undefined;
    },
    answerBudget,
    scheduleRuns(tenantId, first) {
      const key = `${tenantId}/${first}`;
      runLoaders ??= new Map();
      let loader = runLoaders.get(key);
      if (!loader) {
        loader = new DataLoader<string, TaskRecord[]>(async (ids) => {
          const bySchedule = await answerBudget().spend((left) => services.schedules.runs(tenantId, [...ids], first, left));
          return ids.map((id) => bySchedule.get(id) ?? []);
        });
        runLoaders.set(key, loader);
      }
      return loader;
    },
    taskEvents(tenantId, first, after) {
      const key = `${tenantId}/${first}/${after ?? ""}`;
      eventLoaders ??= new Map();
      let loader = eventLoaders.get(key);
      if (!loader) {
        loader = new DataLoader<string, TaskAuditEventRecord[]>(async (ids) => {
          const byTask = await services.tasks.events(tenantId, [...ids], { first, after });
          return ids.map((id) => byTask.get(id) ?? []);
        });
        eventLoaders.set(key, loader);
      }
      return loader;
    },
    replayOf(tenantId) {
      replayLoaders ??= new Map();
      let loader = replayLoaders.get(tenantId);
      if (!loader) {
        loader = new DataLoader<string, string | null>(async (ids) => {
          const byTask = await services.tasks.replaysOf(tenantId, ids);
          return ids.map((id) => byTask.get(id) ?? null);
        });
        replayLoaders.set(tenantId, loader);
      }
      return loader;
    },
    get attempts() {
      return (attempts ??= new DataLoader<string, AttemptRecord[]>(async (ids) => {
        const byTask = await services.tasks.attempts([...ids]);
        return ids.map((id) => byTask.get(id) ?? []);
      }));
    },
    get queueStats() {
      return (queueStats ??= new DataLoader<string, QueueStatsCounts>(async (ids) => {
        const byQueue = await services.queues.stats(ids);
        return ids.map((id) => byQueue.get(id) ?? new Error(`no stats for queue ${id}`));
      }));
    },
    get workflowTasks() {
      return (workflowTasks ??= new DataLoader<WorkflowTasksKey, WorkflowTaskRecord[], string>(
        async (keys) => {
          const found = new Map<string, WorkflowTaskRecord[]>();
          for (const tenantId of new Set(keys.map((k) => k.tenantId))) {
            const ids = keys.filter((k) => k.tenantId === tenantId).map((k) => k.workflowId);
            const byWorkflow = await answerBudget().spend((left) => services.workflows.tasks(tenantId, ids, left));
            for (const [id, tasks] of byWorkflow) found.set(`${tenantId}/${id}`, tasks);
          }
          return keys.map((k) => found.get(`${k.tenantId}/${k.workflowId}`) ?? []);
        },
        { cacheKeyFn: (k) => `${k.tenantId}/${k.workflowId}` },
      ));
    },
    get workflowTaskCounts() {
      return (workflowTaskCounts ??= new DataLoader<WorkflowTasksKey, number, string>(
        async (keys) => {
          const found = new Map<string, number>();
          for (const tenantId of new Set(keys.map((k) => k.tenantId))) {
            const ids = keys.filter((k) => k.tenantId === tenantId).map((k) => k.workflowId);
            for (const [id, n] of await services.workflows.taskCounts(tenantId, ids)) found.set(`${tenantId}/${id}`, n);
          }
          return keys.map((k) => found.get(`${k.tenantId}/${k.workflowId}`) ?? 0);
        },
        { cacheKeyFn: (k) => `${k.tenantId}/${k.workflowId}` },
      ));
    },
  };
}
