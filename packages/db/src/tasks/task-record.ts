import { WITHHELD_BODY, type AttemptOutcome, type BackoffStrategy, type Priority, type TaskStatus } from "@tasklane/core";

/** A task as the hot-path SQL returns it (camelCase, queue name joined in). */
export interface TaskRecord {
  id: string;
  tenantId: string;
  queueId: string;
  queueName: string;
  type: string;
  payload: unknown;
  status: TaskStatus;
  priority: Priority;
  runAt: Date;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
  attempts: number;
  maxAttempts: number;
  backoffStrategy: BackoffStrategy;
  backoffDelaySeconds: number;
  backoffMaxDelaySeconds: number | null;
  backoffJitter: boolean;
  timeoutSeconds: number;
  result: unknown;
  lastError: string | null;
  idempotencyKey: string | null;
  orderingKey: string | null;
  callbackUrl: string | null;
  metadata: unknown;
  workflowId: string | null;
  workflowKey: string | null;
  scheduleId: string | null;
  cancelRequested: boolean;
  leaseGeneration: number;
  leaseToken: string | null;
  leaseExpiresAt: Date | null;
  workerId: string | null;
  dispatchGeneration: number;
  /** W3C traceparent of the task's trace, if it has one (tracing on, or passed through from the submitter). */
  traceParent: string | null;
}

export interface AttemptRecord {
  taskId: string;
  number: number;
  workerId: string | null;
  leaseToken: string | null;
  startedAt: Date;
  finishedAt: Date | null;
  outcome: AttemptOutcome | null;
  error: string | null;
}

/**
 * What a TaskRecord is read from, by output name, in select order (keep in step with
 * mapTaskRow): TASK_COLUMNS and TASK_COLUMN_NAMES_BUT_BODIES are both made from it, so a
 * column expression can hold anything (a comma in a function call) without the names
 * going wrong.
 */
const TASK_COLUMN_NAMES = [
  "id", "tenant_id", "queue_id", "queue_name", "type", "payload", "status", "priority",
  "run_at", "created_at", "updated_at", "started_at", "completed_at", "attempts", "max_attempts",
  "backoff_strategy", "backoff_delay_seconds", "backoff_max_delay_seconds", "backoff_jitter", "timeout_seconds",
  "result", "last_error", "idempotency_key", "ordering_key", "callback_url", "metadata", "workflow_id",
  "workflow_key", "schedule_id", "cancel_requested", "lease_generation", "lease_token", "lease_expires_at",
  "worker_id", "dispatch_generation", "occurrence_key", "trace_parent",
] as const;

/** The columns not read from the task row `t` itself, and their expressions. */
const JOINED_TASK_COLUMNS: Readonly<Partial<Record<(typeof TASK_COLUMN_NAMES)[number], string>>> = { queue_name: "q.name" };

/** Columns of `tasks t JOIN queues q`. */
export const TASK_COLUMNS = TASK_COLUMN_NAMES.map((name) => {
  const expression = JOINED_TASK_COLUMNS[name];
  return expression === undefined ? `t.${name}` : `${expression} AS ${name}`;
}).join(", ");

/**
 * TASK_COLUMNS' output names but payload and result: what a read that may
 * withhold bodies (page-body-budget.ts withheldBodiesSql) passes through.
 */
export const TASK_COLUMN_NAMES_BUT_BODIES: readonly string[] = TASK_COLUMN_NAMES.filter((name) => name !== "payload" && name !== "result");

/**
 * TASK_COLUMNS read from another alias. Data-modifying CTEs must return rows
 * from their own RETURNING: a join back to tasks in the same statement sees
 * the snapshot from before the update.
 */
export const taskColumnsOf = (alias: string) => TASK_COLUMNS.replace(/\bt\./g, `${alias}.`);

export type TaskRow = Record<string, unknown>;

/**
 * A row some bulk read withheld the bodies of (payload_withheld,
 * result_withheld: past the answer's ANSWER_BODY_BYTES) has that payload or
 * result WITHHELD_BODY, which the API answers as a BAD_USER_INPUT error on
 * the field. Only withheldBodiesSql selects those flags, so no record bound
 * for a write, a PUSH request or a webhook can hold it.
 */
export function mapTaskRow(r: TaskRow): TaskRecord {
  return {
    id: r.id as string,
    tenantId: r.tenant_id as string,
    queueId: r.queue_id as string,
    queueName: r.queue_name as string,
    type: r.type as string,
    payload: r.payload_withheld === true ? WITHHELD_BODY : (r.payload ?? null),
    status: r.status as TaskStatus,
    priority: r.priority as Priority,
    runAt: r.run_at as Date,
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
    startedAt: (r.started_at as Date | null) ?? null,
    completedAt: (r.completed_at as Date | null) ?? null,
    attempts: r.attempts as number,
    maxAttempts: r.max_attempts as number,
    backoffStrategy: r.backoff_strategy as BackoffStrategy,
    backoffDelaySeconds: r.backoff_delay_seconds as number,
    backoffMaxDelaySeconds: (r.backoff_max_delay_seconds as number | null) ?? null,
    backoffJitter: r.backoff_jitter as boolean,
    timeoutSeconds: r.timeout_seconds as number,
    result: r.result_withheld === true ? WITHHELD_BODY : (r.result ?? null),
    lastError: (r.last_error as string | null) ?? null,
    idempotencyKey: (r.idempotency_key as string | null) ?? null,
    orderingKey: (r.ordering_key as string | null) ?? null,
    callbackUrl: (r.callback_url as string | null) ?? null,
    metadata: r.metadata ?? null,
    workflowId: (r.workflow_id as string | null) ?? null,
    workflowKey: (r.workflow_key as string | null) ?? null,
    scheduleId: (r.schedule_id as string | null) ?? null,
    cancelRequested: r.cancel_requested as boolean,
    leaseGeneration: r.lease_generation as number,
    leaseToken: (r.lease_token as string | null) ?? null,
    leaseExpiresAt: (r.lease_expires_at as Date | null) ?? null,
    workerId: (r.worker_id as string | null) ?? null,
    dispatchGeneration: r.dispatch_generation as number,
    traceParent: (r.trace_parent as string | null | undefined) ?? null,
  };
}

/**
 * What a PUSH worker needs of a task it starts: the request it sends, its
 * timeout and retry policy, the lease it holds and the trace it joins.
 */
export type PushTaskRecord = Pick<
  TaskRecord,
  | "id"
  | "tenantId"
  | "queueId"
  | "type"
  | "payload"
  | "runAt"
  | "startedAt"
  | "attempts"
  | "maxAttempts"
  | "backoffStrategy"
  | "backoffDelaySeconds"
  | "backoffMaxDelaySeconds"
  | "backoffJitter"
  | "timeoutSeconds"
  | "workflowId"
  | "leaseGeneration"
  | "leaseToken"
  | "leaseExpiresAt"
  | "traceParent"
>;

/** The columns PushTaskRecord is read from (unqualified; the start statement names its alias). */
export const PUSH_TASK_COLUMNS = [
  "id", "tenant_id", "queue_id", "type", "payload", "run_at", "started_at", "attempts", "max_attempts",
  "backoff_strategy", "backoff_delay_seconds", "backoff_max_delay_seconds", "backoff_jitter", "timeout_seconds",
  "workflow_id", "lease_generation", "lease_token", "lease_expires_at", "trace_parent",
];

/**
 * PushTaskRecord's fields of a row. mapTaskRow repeats them rather than
 * spreading this: one flat literal per shape keeps V8's fast path (built as
 * `{ ...mapPushTaskRow(r), …rest }`, a whole task cost ~57 µs to map instead
 * of ~0.1, measured in one loop of 2 million rows).
 */
export function mapPushTaskRow(r: TaskRow): PushTaskRecord {
  return {
    id: r.id as string,
    tenantId: r.tenant_id as string,
    queueId: r.queue_id as string,
    type: r.type as string,
    payload: r.payload ?? null,
    runAt: r.run_at as Date,
    startedAt: (r.started_at as Date | null) ?? null,
    attempts: r.attempts as number,
    maxAttempts: r.max_attempts as number,
    backoffStrategy: r.backoff_strategy as BackoffStrategy,
    backoffDelaySeconds: r.backoff_delay_seconds as number,
    backoffMaxDelaySeconds: (r.backoff_max_delay_seconds as number | null) ?? null,
    backoffJitter: r.backoff_jitter as boolean,
    timeoutSeconds: r.timeout_seconds as number,
    workflowId: (r.workflow_id as string | null) ?? null,
    leaseGeneration: r.lease_generation as number,
    leaseToken: (r.lease_token as string | null) ?? null,
    leaseExpiresAt: (r.lease_expires_at as Date | null) ?? null,
    traceParent: (r.trace_parent as string | null) ?? null,
  };
}

/** What the API's `Task` shows of a task: the fields the gateway's toTask reads. */
export type TaskView = Pick<
  TaskRecord,
  | "id"
  | "type"
  | "queueName"
  | "payload"
  | "status"
  | "priority"
  | "runAt"
  | "createdAt"
  | "startedAt"
  | "completedAt"
  | "attempts"
  | "maxAttempts"
  | "timeoutSeconds"
  | "result"
  | "lastError"
  | "idempotencyKey"
  | "orderingKey"
  | "workflowId"
  | "scheduleId"
  | "cancelRequested"
  | "traceParent"
>;

/**
 * What a PULL lease answers of each task: the API's view of it and the lease
 * it now holds (its generation too, for callers inside the platform that
 * record outcomes by generation rather than by token).
 */
export type LeasedTaskRecord = TaskView & Pick<TaskRecord, "leaseGeneration" | "leaseToken" | "leaseExpiresAt">;

/**
 * The columns LeasedTaskRecord is read from (unqualified), its queue's name
 * aside: a lease names its queue, so the statement need not join it.
 */
export const LEASED_TASK_COLUMNS = [
  "id", "type", "payload", "status", "priority", "run_at", "created_at", "started_at", "completed_at", "attempts",
  "max_attempts", "timeout_seconds", "result", "last_error", "idempotency_key", "ordering_key", "workflow_id", "schedule_id",
  "cancel_requested", "trace_parent", "lease_generation", "lease_token", "lease_expires_at",
];

/** LeasedTaskRecord's fields of a row of the queue named `queueName` (a flat literal, as mapPushTaskRow). */
export function mapLeasedTaskRow(r: TaskRow, queueName: string): LeasedTaskRecord {
  return {
    id: r.id as string,
    type: r.type as string,
    queueName,
    payload: r.payload ?? null,
    status: r.status as TaskStatus,
    priority: r.priority as Priority,
    runAt: r.run_at as Date,
    createdAt: r.created_at as Date,
    startedAt: (r.started_at as Date | null) ?? null,
    completedAt: (r.completed_at as Date | null) ?? null,
    attempts: r.attempts as number,
    maxAttempts: r.max_attempts as number,
    timeoutSeconds: r.timeout_seconds as number,
    result: r.result ?? null,
    lastError: (r.last_error as string | null) ?? null,
    idempotencyKey: (r.idempotency_key as string | null) ?? null,
    orderingKey: (r.ordering_key as string | null) ?? null,
    workflowId: (r.workflow_id as string | null) ?? null,
    scheduleId: (r.schedule_id as string | null) ?? null,
    cancelRequested: r.cancel_requested as boolean,
    traceParent: (r.trace_parent as string | null) ?? null,
    leaseGeneration: r.lease_generation as number,
    leaseToken: (r.lease_token as string | null) ?? null,
    leaseExpiresAt: (r.lease_expires_at as Date | null) ?? null,
  };
}

export function mapAttemptRow(r: TaskRow): AttemptRecord {
  return {
    taskId: r.task_id as string,
    number: r.number as number,
    workerId: (r.worker_id as string | null) ?? null,
    leaseToken: (r.lease_token as string | null) ?? null,
    startedAt: r.started_at as Date,
    finishedAt: (r.finished_at as Date | null) ?? null,
    outcome: (r.outcome as AttemptOutcome | null) ?? null,
    error: (r.error as string | null) ?? null,
  };
}
