/**
 * A validated SubmitTaskInput with every default decided, so storage never
 * has to know the defaults.
 */
import { type ResolvedBackoffPolicy, resolveBackoff } from "../backoff.js";
import { DEFAULT_MAX_ATTEMPTS, DEFAULT_QUEUE_NAME, DEFAULT_TIMEOUT_SECONDS } from "../limits.js";
import { Priority } from "../statuses.js";
import type { SubmitTaskInput } from "./task.js";

export interface TaskSpec {
  type: string;
  queue: string;
  /** JSON; null when not given. */
  payload: unknown;
  priority: Priority;
  runAt: Date;
  maxAttempts: number;
  backoff: ResolvedBackoffPolicy;
  timeoutSeconds: number;
  idempotencyKey: string | null;
  orderingKey: string | null;
  callbackUrl: string | null;
  /** JSON; null when not given. */
  metadata: unknown;
}

/**
 * `input` must already have passed submitTaskInputSchema; `nowMs` is the
 * submission time. A runAt in the past is the submission time, as in Cloud
 * Tasks: kept as given, a task backdated to 1970 had waited 56 years by the
 * queue's oldestQueuedAgeSeconds and tasklane_oldest_queued_age_seconds (an
 * operator's page at 600 s) and went before its lane's whole backlog on a
 * PULL queue, whose lanes are read in runAt order.
 */
export function normalizeTaskSpec(input: SubmitTaskInput, nowMs: number): TaskSpec {
  const runAtMs = resolveRunAtMs(input, nowMs);
  return {
    type: input.type,
    queue: input.queue ?? DEFAULT_QUEUE_NAME,
    payload: input.payload ?? null,
    priority: input.priority ?? Priority.NORMAL,
    runAt: new Date(runAtMs),
    maxAttempts: input.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    backoff: resolveBackoff(input.backoff),
    timeoutSeconds: input.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
    idempotencyKey: input.idempotencyKey ?? null,
    orderingKey: input.orderingKey ?? null,
    callbackUrl: input.callbackUrl ?? null,
    metadata: input.metadata ?? null,
  };
}

/**
 * The runAt (epoch ms) of an input's runAt or delaySeconds (at most one, as
 * their schemas check), `nowMs` being the call's time: neither means now, and
 * a runAt in the past means now too (normalizeTaskSpec says why).
 */
export function resolveRunAtMs(input: { runAt?: Date | null; delaySeconds?: number | null }, nowMs: number): number {
  if (input.runAt != null) return Math.max(input.runAt.getTime(), nowMs);
  if (input.delaySeconds != null) return nowMs + Math.round(input.delaySeconds * 1000);
  return nowMs;
}
