/**
 * Enums shared by every process. Values are identical to the GraphQL contract
 * enums (shared/contract/schema.graphql) so they pass through the API, the
 * database and Redis without mapping.
 */
import { assertNever } from "./assert-never.js";

export const TaskStatus = {
  /** Waiting for its runAt time; not yet eligible. */
  SCHEDULED: "SCHEDULED",
  /** Waiting for its workflow dependencies to succeed. */
  BLOCKED: "BLOCKED",
  /** Eligible to run, waiting for a worker. */
  QUEUED: "QUEUED",
  /** Leased by a worker (pull) or being POSTed to an endpoint (push). */
  RUNNING: "RUNNING",
  /** An attempt failed; waiting out the backoff before it is QUEUED again. */
  RETRYING: "RETRYING",
  /** Terminal: an attempt succeeded. */
  SUCCEEDED: "SUCCEEDED",
  /** Terminal (redrivable): retries exhausted or a non-retryable error; in the dead-letter queue. */
  DEAD: "DEAD",
  /** Terminal: cancelled by the tenant or by a workflow/schedule policy. */
  CANCELLED: "CANCELLED",
  /** Terminal: never run (an upstream workflow task failed, or a schedule misfire/overlap policy skipped it). */
  SKIPPED: "SKIPPED",
} as const;
export type TaskStatus = (typeof TaskStatus)[keyof typeof TaskStatus];

export const Priority = {
  /** Started before NORMAL and LOW work of the same queue. */
  HIGH: "HIGH",
  /** The default. */
  NORMAL: "NORMAL",
  /** Started only when no HIGH or NORMAL work is waiting (subject to aging). */
  LOW: "LOW",
} as const;
export type Priority = (typeof Priority)[keyof typeof Priority];

export const BackoffStrategy = {
  /** delay · 2^(n−1): backs off fast from a struggling dependency. */
  EXPONENTIAL: "EXPONENTIAL",
  /** delay · n. */
  LINEAR: "LINEAR",
  /** The same delay before every retry. */
  FIXED: "FIXED",
} as const;
export type BackoffStrategy = (typeof BackoffStrategy)[keyof typeof BackoffStrategy];

export const QueueMode = {
  /** The platform's worker fleet POSTs each task to the queue's endpointUrl. */
  PUSH: "PUSH",
  /** The tenant's own workers lease tasks through the API. */
  PULL: "PULL",
} as const;
export type QueueMode = (typeof QueueMode)[keyof typeof QueueMode];

/** A queue limit that `removeLimits` can take away (null in an update leaves a limit as it is). */
export const QueueLimit = {
  CONCURRENCY: "CONCURRENCY",
  RATE_LIMIT: "RATE_LIMIT",
} as const;
export type QueueLimit = (typeof QueueLimit)[keyof typeof QueueLimit];

/** A tenant limit that `removeLimits` can take away; weight and the API rate always have a value. */
export const TenantLimit = {
  MAX_CONCURRENCY: "MAX_CONCURRENCY",
  MAX_PENDING_TASKS: "MAX_PENDING_TASKS",
  DAILY_TASK_QUOTA: "DAILY_TASK_QUOTA",
} as const;
export type TenantLimit = (typeof TenantLimit)[keyof typeof TenantLimit];

export const MisfirePolicy = {
  /** Missed occurrences are recorded as SKIPPED runs. */
  SKIP: "SKIP",
  /** One run on recovery stands in for all missed occurrences. */
  FIRE_ONCE: "FIRE_ONCE",
  /** One run per missed occurrence. */
  CATCH_UP: "CATCH_UP",
} as const;
export type MisfirePolicy = (typeof MisfirePolicy)[keyof typeof MisfirePolicy];

export const OverlapPolicy = {
  /** Occurrences start regardless of unfinished previous runs. */
  ALLOW: "ALLOW",
  /** An occurrence is skipped while the previous run is unfinished. */
  SKIP: "SKIP",
  /** An occurrence waits and starts when the previous run finishes. */
  QUEUE: "QUEUE",
  /** The previous run is cancelled, then the occurrence starts. */
  CANCEL_RUNNING: "CANCEL_RUNNING",
} as const;
export type OverlapPolicy = (typeof OverlapPolicy)[keyof typeof OverlapPolicy];

export const WorkflowStatus = {
  /** At least one task is not yet terminal. */
  RUNNING: "RUNNING",
  /** Terminal: every task succeeded. */
  SUCCEEDED: "SUCCEEDED",
  /** Terminal: some task ended DEAD (its dependants are SKIPPED), whatever else was cancelled. */
  FAILED: "FAILED",
  /**
   * Terminal: cancelled through cancelWorkflow, or one of its tasks through
   * cancelTask (its dependants are SKIPPED) and none ended DEAD: the user's
   * decision, not a failure, as a cancelled task is not a dead one.
   */
  CANCELLED: "CANCELLED",
} as const;
export type WorkflowStatus = (typeof WorkflowStatus)[keyof typeof WorkflowStatus];

export const AttemptOutcome = {
  /** The worker/endpoint reported success. */
  SUCCEEDED: "SUCCEEDED",
  /** The worker/endpoint reported an error. */
  FAILED: "FAILED",
  /** The attempt ran past its timeoutSeconds. */
  TIMED_OUT: "TIMED_OUT",
  /** The lease lapsed without heartbeat or completion (worker presumed dead). */
  LEASE_EXPIRED: "LEASE_EXPIRED",
  /** The task was cancelled while the attempt was running. */
  CANCELLED: "CANCELLED",
} as const;
export type AttemptOutcome = (typeof AttemptOutcome)[keyof typeof AttemptOutcome];

/** Statuses a task never leaves on its own (DEAD only by an explicit redrive). */
export const TERMINAL_TASK_STATUSES: readonly TaskStatus[] = [
  TaskStatus.SUCCEEDED,
  TaskStatus.DEAD,
  TaskStatus.CANCELLED,
  TaskStatus.SKIPPED,
];

/** Statuses counted against a tenant's maxPendingTasks (contract: TenantLimits). */
export const PENDING_TASK_STATUSES: readonly TaskStatus[] = [
  TaskStatus.SCHEDULED,
  TaskStatus.QUEUED,
  TaskStatus.RETRYING,
  TaskStatus.BLOCKED,
];

export function isTerminalStatus(s: TaskStatus): boolean {
  return TERMINAL_TASK_STATUSES.includes(s);
}

/**
 * Numeric rank, lower runs first: the same number is used as the BullMQ job
 * priority (where 1 beats 2) and as the SQL ORDER BY key, so both agree.
 */
export function priorityRank(p: Priority): 1 | 2 | 3 {
  switch (p) {
    case Priority.HIGH:
      return 1;
    case Priority.NORMAL:
      return 2;
    case Priority.LOW:
      return 3;
    default:
      return assertNever(p);
  }
}

/** The priority of a rank (a job's lane): the inverse of priorityRank, a lane outside 1..3 taken as the nearest. */
export function priorityOfRank(rank: number): Priority {
  if (rank <= 1) return Priority.HIGH;
  return rank >= 3 ? Priority.LOW : Priority.NORMAL;
}
