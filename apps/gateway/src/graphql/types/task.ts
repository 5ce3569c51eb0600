/**
 * Task, its inputs and the worker-facing types (contract: Task, Attempt,
 * TaskConnection, TaskFilter, SubmitTaskInput, BackoffInput, Lease,
 * HeartbeatResult, TaskEvent). Enum values are core's, identical to the contract.
 */
import { BackoffStrategy, Priority, TaskStatus } from "@tasklane/core";
import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from "type-graphql";
import { PageInfo } from "./common.js";
import { DateTimeScalar, JSONScalar } from "./scalars.js";

registerEnumType(Priority, { name: "Priority" });
registerEnumType(TaskStatus, { name: "TaskStatus" });
registerEnumType(BackoffStrategy, { name: "BackoffStrategy" });

@InputType("BackoffInput")
export class BackoffInput {
  @Field(() => BackoffStrategy)
  strategy!: BackoffStrategy;

  @Field(() => Float)
  delaySeconds!: number;

  @Field(() => Float, { nullable: true })
  maxDelaySeconds?: number | null;

  @Field(() => Boolean, { nullable: true })
  jitter?: boolean | null;
}

@InputType("SubmitTaskInput")
export class SubmitTaskInput {
  @Field(() => String)
  type!: string;

  @Field(() => String, { nullable: true, description: 'default "default"' })
  queue?: string | null;

  @Field(() => JSONScalar, { nullable: true })
  payload?: unknown;

  @Field(() => Priority, { nullable: true })
  priority?: Priority | null;

  @Field(() => DateTimeScalar, { nullable: true, description: "null and no delaySeconds: run now" })
  runAt?: Date | null;

  @Field(() => Float, { nullable: true })
  delaySeconds?: number | null;

  @Field(() => Int, { nullable: true, description: "attempts in all, first included" })
  maxAttempts?: number | null;

  @Field(() => BackoffInput, { nullable: true })
  backoff?: BackoffInput | null;

  @Field(() => Int, { nullable: true })
  timeoutSeconds?: number | null;

  @Field(() => String, { nullable: true, description: "same tenant + key: the first task is returned, nothing new is created" })
  idempotencyKey?: string | null;

  @Field(() => String, { nullable: true, description: "tasks of one tenant with the same key run one at a time, in submission order" })
  orderingKey?: string | null;

  @Field(() => String, { nullable: true, description: "receives the task's terminal event, signed like webhooks" })
  callbackUrl?: string | null;

  @Field(() => JSONScalar, { nullable: true })
  metadata?: unknown;
}

@ObjectType("Attempt", { simpleResolvers: true })
export class Attempt {
  @Field(() => Int)
  number!: number;

  @Field(() => String, { nullable: true })
  workerId!: string | null;

  @Field(() => String, { nullable: true })
  leaseToken!: string | null;

  @Field(() => DateTimeScalar)
  startedAt!: Date;

  @Field(() => DateTimeScalar, { nullable: true })
  finishedAt!: Date | null;

  @Field(() => String, { nullable: true, description: "SUCCEEDED, FAILED, TIMED_OUT, LEASE_EXPIRED, CANCELLED" })
  outcome!: string | null;

  @Field(() => String, { nullable: true })
  error!: string | null;
}

/** `attemptHistory` is a field resolver (task.resolver.ts), batched per request. */
@ObjectType("Task", { simpleResolvers: true })
export class Task {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  type!: string;

  @Field(() => String, { description: "the queue's name" })
  queue!: string;

  @Field(() => JSONScalar, { nullable: true })
  payload!: unknown;

  @Field(() => TaskStatus)
  status!: TaskStatus;

  @Field(() => Priority)
  priority!: Priority;

  @Field(() => DateTimeScalar)
  runAt!: Date;

  @Field(() => DateTimeScalar)
  createdAt!: Date;

  @Field(() => DateTimeScalar, { nullable: true })
  startedAt!: Date | null;

  @Field(() => DateTimeScalar, { nullable: true })
  completedAt!: Date | null;

  @Field(() => Int)
  attempts!: number;

  @Field(() => Int)
  maxAttempts!: number;

  @Field(() => Int, { description: "each attempt's time budget: a PUSH request's timeout; a PULL lease and its heartbeats never reach past it" })
  timeoutSeconds!: number;

  @Field(() => JSONScalar, { nullable: true })
  result!: unknown;

  @Field(() => String, { nullable: true })
  lastError!: string | null;

  @Field(() => String, { nullable: true })
  idempotencyKey!: string | null;

  @Field(() => String, { nullable: true })
  orderingKey!: string | null;

  @Field(() => ID, { nullable: true })
  workflowId!: string | null;

  @Field(() => ID, { nullable: true })
  scheduleId!: string | null;

  @Field(() => Boolean)
  cancelRequested!: boolean;
  @Field(() => String, {
    nullable: true,
    description: "W3C traceparent of the task's trace (null without one): a PULL worker passes it on to join the trace",
  })
  traceParent!: string | null;
}

@ObjectType("TaskConnection", { simpleResolvers: true })
export class TaskConnection {
  @Field(() => [Task])
  nodes!: Task[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;

  @Field(() => Int, { description: "exact" })
  totalCount!: number;

  @Field(() => ID, {
    nullable: true,
    description:
      "tasks: the newest event id that was final (published to feeds) before this page was read; pass it as taskUpdated's `after` to follow the list from here with no change missed (a change already in the page may come again). Null for deadLetterTasks",
  })
  eventCursor?: string | null;
}

@InputType("TaskFilter")
export class TaskFilter {
  @Field(() => [TaskStatus], { nullable: true })
  status?: TaskStatus[] | null;

  @Field(() => String, { nullable: true })
  type?: string | null;

  @Field(() => String, { nullable: true })
  queue?: string | null;

  @Field(() => ID, { nullable: true })
  workflowId?: string | null;

  @Field(() => ID, { nullable: true })
  scheduleId?: string | null;

  @Field(() => DateTimeScalar, { nullable: true })
  createdAfter?: Date | null;

  @Field(() => DateTimeScalar, { nullable: true })
  createdBefore?: Date | null;
}

@ObjectType("Lease", { simpleResolvers: true })
export class Lease {
  @Field(() => Task)
  task!: Task;

  @Field(() => String, { description: "changes with every lease; a stale token is refused" })
  leaseToken!: string;

  @Field(() => DateTimeScalar)
  leaseExpiresAt!: Date;

  @Field(() => Int, {
    description: "ms from this answer until the task's runAt: run it no sooner (0 unless leased ahead with startAheadMs); the lease counts from runAt",
  })
  startInMs!: number;

  @Field(() => Int, {
    description:
      "ms this call waited on the server before this lease was granted (0 when it found work at once): a worker measuring the lease from when it sent the call adds this, or a long poll's wait eats into the task's time",
  })
  waitedMs!: number;

  @Field(() => JSONScalar, {
    nullable: true,
    description:
      "workflow tasks: each parent's result by workflow key, in key order up to 1 MiB in all; past it a parent's entry is {resultOmitted: true, taskId, resultBytes}: read that result with task(id). null outside workflows",
  })
  parents!: Record<string, unknown> | null;
}

@InputType("TaskCompletionInput")
export class TaskCompletionInput {
  @Field(() => ID)
  taskId!: string;

  @Field(() => String)
  leaseToken!: string;

  @Field(() => JSONScalar, { nullable: true })
  result!: unknown;
}

@ObjectType("TaskCompletionOutcome", { simpleResolvers: true, description: "completeTasks: one per input item, in input order" })
export class TaskCompletionOutcome {
  @Field(() => ID)
  taskId!: string;

  @Field(() => Boolean, { description: "recorded as SUCCEEDED; otherwise `code` says why, as completeTask would have answered" })
  accepted!: boolean;

  @Field(() => Task, { nullable: true })
  task!: Task | null;

  @Field(() => String, { nullable: true, description: "CONFLICT (the lease is no longer held), NOT_FOUND or BAD_USER_INPUT (result too large)" })
  code!: string | null;

  @Field(() => String, { nullable: true })
  message!: string | null;
}

@ObjectType("HeartbeatResult", { simpleResolvers: true })
export class HeartbeatResult {
  @Field(() => DateTimeScalar)
  leaseExpiresAt!: Date;

  @Field(() => Boolean, { description: "true after cancelTask; the lease stays valid so the worker can stop cleanly" })
  cancelRequested!: boolean;
}

@ObjectType("TaskEvent", { simpleResolvers: true })
export class TaskEvent {
  @Field(() => ID, { description: "the event's id, as TaskAuditEvent.id: ascending along a feed; pass the last one as taskUpdated's `after` to resume" })
  id!: string;

  @Field(() => ID)
  taskId!: string;

  @Field(() => TaskStatus)
  status!: TaskStatus;

  @Field(() => TaskStatus, { nullable: true })
  previousStatus!: TaskStatus | null;

  @Field(() => DateTimeScalar)
  at!: Date;

  @Field(() => Task)
  task!: Task;
}
