/**
 * The contract's types (shared/contract/schema.graphql), written by hand.
 * DateTime values are ISO-8601 strings (UTC, millisecond precision) on output;
 * inputs accept a Date or an ISO string with an offset. JSON values are
 * `unknown` unless the caller narrows them with the type parameters, which are
 * assertions, not checks.
 */
import type {
  BackoffStrategy,
  MisfirePolicy,
  OverlapPolicy,
  Priority,
  QueueMode,
  TaskStatus,
  WorkflowStatus,
} from "@tasklane/core/statuses";

export type { BackoffStrategy, MisfirePolicy, OverlapPolicy, Priority, QueueMode, TaskStatus, WorkflowStatus };

/** An ISO-8601 date-time string as the API returns it, e.g. "2030-01-01T00:00:00.000Z". */
export type DateTimeString = string;
/** What inputs accept for a DateTime: a Date, or an ISO string with an explicit offset. */
export type DateTimeInput = Date | string;

// ---------------------------------------------------------------- tasks

export interface Attempt {
  number: number;
  workerId: string | null;
  leaseToken: string | null;
  startedAt: DateTimeString;
  finishedAt: DateTimeString | null;
  /** SUCCEEDED, FAILED, TIMED_OUT, LEASE_EXPIRED or CANCELLED; null while running. */
  outcome: string | null;
  error: string | null;
}

export interface Task<TPayload = unknown, TResult = unknown> {
  id: string;
  type: string;
  queue: string;
  payload: TPayload | null;
  status: TaskStatus;
  priority: Priority;
  runAt: DateTimeString;
  createdAt: DateTimeString;
  startedAt: DateTimeString | null;
  completedAt: DateTimeString | null;
  /** Attempts started so far, the current one included. */
  attempts: number;
  /** Attempts in all, first included. */
  maxAttempts: number;
  /** Each attempt's time budget: a lease and its heartbeats never reach past it. */
  timeoutSeconds: number;
  result: TResult | null;
  lastError: string | null;
  idempotencyKey: string | null;
  orderingKey: string | null;
  workflowId: string | null;
  scheduleId: string | null;
  cancelRequested: boolean;
  /**
   * W3C traceparent of the task's trace (OpenTelemetry), null without one:
   * a pull worker can start its handler's span as a child of it.
   */
  traceParent?: string | null;
}

/** A task with its attempts, as `tasks.get` returns it. */
export interface TaskWithAttempts<TPayload = unknown, TResult = unknown> extends Task<TPayload, TResult> {
  attemptHistory: Attempt[];
  /** The task this one replays (`tasks.replay`); null for any other task. */
  replayOf: string | null;
}

/** `tasks.replay`'s answer: the new task, naming the finished one it replays. */
export interface ReplayedTask<TPayload = unknown, TResult = unknown> extends Task<TPayload, TResult> {
  replayOf: string;
}

export interface PageInfo {
  hasNextPage: boolean;
  endCursor: string | null;
}

export interface TaskConnection<TPayload = unknown, TResult = unknown> {
  nodes: Task<TPayload, TResult>[];
  pageInfo: PageInfo;
  /** Exact. */
  totalCount: number;
  /**
   * `tasks.list`: where a feed following this page starts, read before the page: pass it as
   * `live.taskUpdates({ after })` and no change after the page is missed (one already in it may come
   * again). Absent from `tasks.deadLetters`.
   */
  eventCursor?: string | null;
}

export interface BackoffInput {
  strategy: BackoffStrategy;
  delaySeconds: number;
  maxDelaySeconds?: number | null;
  jitter?: boolean | null;
}

interface SubmitTaskFields<TPayload> {
  type: string;
  /** @defaultValue "default" */
  queue?: string | null;
  payload?: TPayload | null;
  /** @defaultValue NORMAL */
  priority?: Priority | null;
  /** Attempts in all, first included. @defaultValue 3 */
  maxAttempts?: number | null;
  /** @defaultValue EXPONENTIAL from 1 s, capped at 1 h, with jitter */
  backoff?: BackoffInput | null;
  /** @defaultValue 300 */
  timeoutSeconds?: number | null;
  /**
   * Same tenant + key: the first task is returned and nothing new is created.
   * Also what makes the SDK retry this submission after an ambiguous failure
   * (timeout, connection reset, 5xx): without it, such a failure is thrown.
   */
  idempotencyKey?: string | null;
  /** Tasks of one tenant with the same key run one at a time, in submission order. */
  orderingKey?: string | null;
  /** Receives the task's terminal event, signed like webhooks. */
  callbackUrl?: string | null;
  metadata?: unknown;
}

/** When the task becomes eligible: at `runAt`, after `delaySeconds`, or now (neither). */
export type SubmitTaskTiming =
  | { runAt: DateTimeInput; delaySeconds?: never }
  | { delaySeconds: number; runAt?: never }
  | { runAt?: null; delaySeconds?: null };

export type SubmitTaskInput<TPayload = unknown> = SubmitTaskFields<TPayload> & SubmitTaskTiming;

/** tasks.reschedule: the task's new time, as at submission; neither runAt nor delaySeconds means now. */
export type RescheduleOptions = SubmitTaskTiming;

export interface TaskFilter {
  status?: TaskStatus[] | null;
  type?: string | null;
  queue?: string | null;
  workflowId?: string | null;
  scheduleId?: string | null;
  createdAfter?: DateTimeInput | null;
  createdBefore?: DateTimeInput | null;
}

export interface PageOptions {
  /** @defaultValue 50 (at most 500) */
  first?: number;
  /** `pageInfo.endCursor` of the previous page (for `workflows.list`, the id of its last workflow). */
  after?: string | null;
}

// ---------------------------------------------------------------- leases

export interface Lease<TPayload = unknown> {
  task: Task<TPayload>;
  /** Changes with every lease; a stale token is refused. */
  leaseToken: string;
  leaseExpiresAt: DateTimeString;
  /**
   * Milliseconds from the answer until the task's runAt: run it no sooner.
   * 0 unless it was leased ahead (LeaseRequest.startAheadMs); the lease counts from runAt.
   */
  startInMs: number;
  /**
   * Milliseconds the lease call waited on the server before this lease was granted (0 when it
   * found work at once). Measured on the server's own clock, so a worker timing the lease from
   * when it sent the call can add it without knowing how the clocks differ.
   */
  waitedMs: number;
  /** Workflow tasks: each parent's result by workflow key (read with the lease); null outside workflows. */
  parents?: Record<string, unknown> | null;
}

export interface HeartbeatResult {
  leaseExpiresAt: DateTimeString;
  /** True after cancelTask; the lease stays valid so the worker can stop cleanly. */
  cancelRequested: boolean;
}

export interface LeaseRequest {
  queue: string;
  workerId: string;
  /** Most tasks to lease. @defaultValue 1 on the server */
  max?: number;
  /** @defaultValue 30 */
  leaseSeconds?: number;
  /** Long-poll: return as soon as one task can be leased, or empty when the wait ends (at most 20). */
  waitSeconds?: number;
  /**
   * Also lease tasks due within this many ms (at most 1,000), each with its startInMs:
   * holding them until then takes the lease call's round trip off their start.
   * @defaultValue 0
   */
  startAheadMs?: number;
}

// ---------------------------------------------------------------- queues

export interface RateLimit {
  perSecond: number;
  burst: number;
}

export interface RateLimitInput {
  perSecond: number;
  burst?: number | null;
}

export interface QueueStats {
  scheduled: number;
  queued: number;
  running: number;
  retrying: number;
  dead: number;
  succeeded: number;
  /** Null when nothing is queued. */
  oldestQueuedAgeSeconds: number | null;
}

export interface Queue {
  name: string;
  mode: QueueMode;
  endpointUrl: string | null;
  concurrency: number | null;
  rateLimit: RateLimit | null;
  paused: boolean;
  stats: QueueStats;
}

interface UpsertQueueFields {
  name: string;
  /** Most tasks of this queue running at once; omitted or null: left as it is (none on a new queue). */
  concurrency?: number | null;
  /** Most task starts a second; omitted or null: left as it is (none on a new queue). */
  rateLimit?: RateLimitInput | null;
  paused?: boolean | null;
  /** Limits to take away: the queue then has no limit of that kind. */
  removeLimits?: ("CONCURRENCY" | "RATE_LIMIT")[] | null;
}

/**
 * PUSH queues need the endpoint the worker fleet POSTs to when created or switched to PUSH
 * (omitted, an existing PUSH queue keeps its own); PULL queues must not have one.
 */
export type UpsertQueueInput =
  | (UpsertQueueFields & { mode: "PUSH"; endpointUrl?: string | null })
  | (UpsertQueueFields & { mode: "PULL"; endpointUrl?: null });

// ---------------------------------------------------------------- schedules

export interface TaskTemplateInput<TPayload = unknown> {
  type: string;
  queue?: string | null;
  payload?: TPayload | null;
  priority?: Priority | null;
  maxAttempts?: number | null;
  backoff?: BackoffInput | null;
  timeoutSeconds?: number | null;
}

export interface CreateScheduleInput<TPayload = unknown> {
  name: string;
  /** 5-field cron, or 6 with seconds. */
  cron: string;
  /** IANA zone. @defaultValue "UTC" */
  timezone?: string | null;
  task: TaskTemplateInput<TPayload>;
  misfirePolicy?: MisfirePolicy | null;
  overlapPolicy?: OverlapPolicy | null;
  enabled?: boolean | null;
}

/** Omitted or null fields are left as they are. */
export interface UpdateScheduleInput<TPayload = unknown> {
  cron?: string | null;
  timezone?: string | null;
  task?: TaskTemplateInput<TPayload> | null;
  misfirePolicy?: MisfirePolicy | null;
  overlapPolicy?: OverlapPolicy | null;
  enabled?: boolean | null;
}

export interface Schedule {
  id: string;
  name: string;
  cron: string;
  timezone: string;
  enabled: boolean;
  version: number;
  misfirePolicy: MisfirePolicy;
  overlapPolicy: OverlapPolicy;
  nextRunAt: DateTimeString | null;
  lastRunAt: DateTimeString | null;
}

// ---------------------------------------------------------------- workflows

export interface WorkflowTaskInput<TPayload = unknown> extends TaskTemplateInput<TPayload> {
  /** Unique within the workflow. */
  key: string;
  dependsOn?: string[] | null;
}

export interface SubmitWorkflowInput {
  name: string;
  tasks: WorkflowTaskInput[];
  /** Also makes the SDK retry this submission after an ambiguous failure. */
  idempotencyKey?: string | null;
}

export interface WorkflowTask {
  key: string;
  dependsOn: string[];
  task: Task;
}

export interface Workflow {
  id: string;
  name: string;
  status: WorkflowStatus;
  createdAt: DateTimeString;
  completedAt: DateTimeString | null;
  /** How many tasks `tasks` holds. */
  taskCount: number;
  tasks: WorkflowTask[];
}

// ---------------------------------------------------------------- webhooks

export interface CreateWebhookInput {
  url: string;
  /** e.g. task.succeeded, task.dead, task.cancelled, workflow.completed; "*" for all. */
  events: string[];
}

/** Omitted or null: left as it is. */
export interface UpdateWebhookInput {
  url?: string | null;
  events?: string[] | null;
  /** true re-enables a disabled endpoint (same secret; disabledReason and failureStreak cleared); false stops deliveries. */
  enabled?: boolean | null;
}

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  /** Why the endpoint is disabled (e.g. "endpoint answered 410 Gone"); null while enabled. */
  disabledReason: string | null;
  /** Consecutive failed delivery attempts; reset by a success or by re-enabling. */
  failureStreak: number;
  /** Until when the secret the last `rotateSecret` replaced still signs deliveries beside the current one; null when none does. */
  previousSecretExpiresAt: DateTimeString | null;
  createdAt: DateTimeString;
}

export interface WebhookWithSecret {
  webhook: Webhook;
  /** Shown once; signs deliveries (Standard Webhooks). */
  secret: string;
}

/** A delivery's status (the contract's WebhookDeliveryStatus). */
export type WebhookDeliveryStatus = "PENDING" | "DELIVERED" | "FAILED";

export interface WebhookDelivery {
  id: string;
  /** Null for a task's callback (its callbackUrl). */
  webhookId: string | null;
  event: string;
  taskId: string | null;
  status: WebhookDeliveryStatus;
  /** Every attempt made, redeliveries' included. */
  attempts: number;
  lastResponseCode: number | null;
  /** Why the last attempt failed (network error, timeout, refused target, response excerpt). */
  lastError: string | null;
  createdAt: DateTimeString;
  deliveredAt: DateTimeString | null;
  /** When a PENDING delivery's next attempt is due (a retry waits out WEBHOOK_RETRY_SCHEDULE or the receiver's Retry-After); null once DELIVERED or FAILED. */
  nextAttemptAt: DateTimeString | null;
}

export interface WebhookDeliveriesOptions {
  /** Omitted: every delivery, callbacks included. */
  webhookId?: string | null;
  /** @defaultValue 50 */
  first?: number | null;
  /** The last id of the previous page: the deliveries after it (older), so pages walk every delivery once. */
  before?: string | null;
  /** Only deliveries with this status. */
  status?: WebhookDeliveryStatus | null;
}

// ---------------------------------------------------------------- tenant

export interface TenantLimits {
  weight: number;
  maxConcurrency: number | null;
  apiRatePerSecond: number;
  apiBurst: number;
  maxPendingTasks: number | null;
  dailyTaskQuota: number | null;
}

/** Omitted or null: left as it is (the default on create); `removeLimits` takes a limit away. */
export type TenantLimitsInput = { [K in keyof TenantLimits]?: TenantLimits[K] | null } & {
  removeLimits?: ("MAX_CONCURRENCY" | "MAX_PENDING_TASKS" | "DAILY_TASK_QUOTA")[] | null;
};

export interface TenantUsage {
  pendingTasks: number;
  runningTasks: number;
  submittedToday: number;
}

export interface Tenant {
  id: string;
  name: string;
  limits: TenantLimits;
  usage: TenantUsage;
}

export interface CreateTenantInput {
  name: string;
  limits?: TenantLimitsInput | null;
}

export interface TenantWithKey {
  tenant: Tenant;
  /** Shown once. */
  apiKey: string;
  /** Shown once; signs PUSH requests and callbacks. */
  signingSecret: string;
}

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  createdAt: DateTimeString;
  lastUsedAt: DateTimeString | null;
  revokedAt: DateTimeString | null;
  /** After this the key stops working (console sessions); null: never. */
  expiresAt: DateTimeString | null;
}

export interface ApiKeyWithSecret {
  apiKey: ApiKey;
  /** Shown once. */
  secret: string;
}

/** One item of completeTasks. */
export interface TaskCompletion {
  taskId: string;
  leaseToken: string;
  result?: unknown;
}

/** completeTasks' answer for one item: recorded, or refused with the code completeTask would have answered. */
export interface TaskCompletionOutcome<TPayload = unknown> {
  taskId: string;
  accepted: boolean;
  task: Task<TPayload> | null;
  code: string | null;
  message: string | null;
}
