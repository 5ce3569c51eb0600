/**
 * rescheduleTask's rule: which tasks may have their runAt moved, and the
 * status each then has. Storage (packages/db reschedule-task.ts) builds its
 * conditional update from these, so the rule lives in one place.
 */
import { assertNever } from "./assert-never.js";
import { TaskStatus } from "./statuses.js";
import type { TaskTransition } from "./task-state-machine.js";

/**
 * A task waiting for its next attempt with nothing running: SCHEDULED (not
 * yet due), QUEUED (due, waiting for a worker) and RETRYING (waiting out a
 * backoff). BLOCKED waits for its workflow's parents, not for a time, so a
 * runAt would change nothing; RUNNING has an attempt out; terminal tasks wait
 * for nothing.
 */
export const RESCHEDULABLE_STATUSES: readonly TaskStatus[] = [TaskStatus.SCHEDULED, TaskStatus.QUEUED, TaskStatus.RETRYING];

export function isReschedulable(status: TaskStatus): boolean {
  return RESCHEDULABLE_STATUSES.includes(status);
}

export interface RescheduleOutcome {
  status: TaskStatus;
  /** The state machine's transition that makes the change; null when the status stays (only runAt moves). */
  transition: TaskTransition | null;
}

/**
 * The status of a task rescheduled from `from` (which must be reschedulable)
 * to a runAt that is `due` (at or before now) or not, as the state machine has
 * it for a task due at that time:
 * - due: QUEUED, as a due SCHEDULED task is promoted and a RETRYING one whose
 *   backoff elapsed is retryDue. A RETRYING task run now is its retry, early:
 *   attempts and maxAttempts stay, so it is the attempt it would have been.
 * - not due: SCHEDULED for a task that was SCHEDULED or QUEUED (waiting for its
 *   runAt again); a RETRYING task stays RETRYING, its backoff now ending at the
 *   new runAt (it still waits to retry a failed attempt, which its status says).
 */
export function rescheduleOutcome(from: TaskStatus, due: boolean): RescheduleOutcome {
  switch (from) {
    case TaskStatus.SCHEDULED:
      return due ? { status: TaskStatus.QUEUED, transition: "promote" } : { status: TaskStatus.SCHEDULED, transition: null };
    case TaskStatus.QUEUED:
      return due ? { status: TaskStatus.QUEUED, transition: null } : { status: TaskStatus.SCHEDULED, transition: "reschedule" };
    case TaskStatus.RETRYING:
      return due ? { status: TaskStatus.QUEUED, transition: "retryDue" } : { status: TaskStatus.RETRYING, transition: null };
    case TaskStatus.BLOCKED:
    case TaskStatus.RUNNING:
    case TaskStatus.SUCCEEDED:
    case TaskStatus.DEAD:
    case TaskStatus.CANCELLED:
    case TaskStatus.SKIPPED:
      throw new Error(`a ${from} task is not rescheduled`);
    default:
      return assertNever(from);
  }
}
