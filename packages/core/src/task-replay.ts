/**
 * replayTask: a finished task run again as a NEW task (Trigger.dev's
 * runs.replay, Hatchet's and Inngest's replay). The original is never
 * touched (no transition: its status, attempts and events stay); the replay
 * is an ordinary submission carrying the original's submission and a link
 * back to it (tasks.replay_of).
 *
 * Which tasks:
 * - Terminal ones (TERMINAL_TASK_STATUSES): SUCCEEDED, DEAD, CANCELLED and
 *   SKIPPED. A SKIPPED task outside a workflow is a schedule's run that its
 *   misfire or overlap policy, or a tenant quota, never ran: replaying it
 *   runs it now, which is what a user looking at it wants. A DEAD task can
 *   also be redriven (the same task, a fresh budget); a replay leaves it
 *   DEAD in the dead-letter queue and runs a copy.
 * - Not unfinished ones (CONFLICT): the original may still run, and two runs
 *   of one submission at once is what the user can get by submitting again.
 * - Not a workflow's task (CONFLICT): its parents' results are part of what
 *   its handler receives, and a task outside the workflow has no parents;
 *   the workflow is submitted again instead (as redriveTask refuses them).
 *
 * What the replay keeps: queue, type, payload, metadata, priority,
 * maxAttempts, backoff, timeoutSeconds, callbackUrl and orderingKey. The
 * ordering key is kept (Trigger.dev keeps the concurrency key): it names the
 * entity the handler works on, and the key's tasks run one at a time in
 * submission order, so the replay waits for that entity's earlier tasks and
 * never runs beside them. Dropped: runAt (due now), the idempotency key (a
 * key names one submission, and the original holds it), the workflow and the
 * schedule (a replay is a task of its own: a schedule's overlap policy does
 * not count it as one of its runs).
 */
import { ConflictError } from "./errors.js";
import type { SubmitTaskInput } from "./schemas/task.js";
import { isTerminalStatus, type BackoffStrategy, type Priority, type TaskStatus } from "./statuses.js";

/** What a replay reads of the original (a stored task's fields, as the API names them). */
export interface ReplaySource {
  status: TaskStatus;
  workflowId: string | null;
  queueName: string;
  type: string;
  payload: unknown;
  metadata: unknown;
  priority: Priority;
  maxAttempts: number;
  backoffStrategy: BackoffStrategy;
  backoffDelaySeconds: number;
  backoffMaxDelaySeconds: number | null;
  backoffJitter: boolean;
  timeoutSeconds: number;
  callbackUrl: string | null;
  orderingKey: string | null;
}

/** Why `task` cannot be replayed, or null when it can. */
export function replayRefusal(task: Pick<ReplaySource, "status" | "workflowId">): string | null {
  if (!isTerminalStatus(task.status)) return `Only a finished task is replayed; this one is ${task.status} (cancel it, or wait for it to finish)`;
  if (task.workflowId !== null) return "A workflow's task is not replayed on its own: its parents' results are part of its input. Submit the workflow again";
  return null;
}

/** Throws CONFLICT (nothing written) when `task` cannot be replayed. */
export function assertReplayable(task: Pick<ReplaySource, "status" | "workflowId">): void {
  const refusal = replayRefusal(task);
  if (refusal !== null) throw new ConflictError(refusal, { status: task.status });
}

/**
 * The submission a replay makes: the original's own, due now, without an
 * idempotency key. Handed to the same normalisation and checks as a
 * submitTask input (the gateway's toSpecs), so the callback URL is checked
 * against today's ALLOW_PRIVATE_TARGETS and defaults are decided once.
 */
export function replayInput(original: ReplaySource): SubmitTaskInput {
  return {
    type: original.type,
    queue: original.queueName,
    payload: original.payload,
    metadata: original.metadata,
    priority: original.priority,
    maxAttempts: original.maxAttempts,
    backoff: {
      strategy: original.backoffStrategy,
      delaySeconds: original.backoffDelaySeconds,
      maxDelaySeconds: original.backoffMaxDelaySeconds,
      jitter: original.backoffJitter,
    },
    timeoutSeconds: original.timeoutSeconds,
    callbackUrl: original.callbackUrl,
    orderingKey: original.orderingKey,
    runAt: null,
    delaySeconds: null,
    idempotencyKey: null,
  };
}
