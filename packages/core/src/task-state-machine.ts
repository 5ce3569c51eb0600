/**
 * The one table of legal task status changes. Storage layers (SQL, Lua) write
 * `status` only through a named transition and use `allowedFrom` as the
 * guard of their conditional update, so an illegal change cannot be expressed.
 */
import { TaskStatus } from "./statuses.js";

export const TaskTransition = {
  /** runAt reached: the task becomes eligible. */
  promote: "promote",
  /** A worker leases it (or the push fleet picks it up). SCHEDULED/RETRYING are allowed so a due task can be started without an intermediate write. */
  start: "start",
  /** The running attempt succeeded. */
  succeed: "succeed",
  /** The running attempt failed and the retry decision said retry. */
  retry: "retry",
  /** The running attempt failed and the retry decision said dead. */
  die: "die",
  /** The backoff elapsed. */
  retryDue: "retryDue",
  /** Cancelled by the tenant or a policy; RUNNING is included (the worker learns through heartbeat). */
  cancel: "cancel",
  /** An operator sends a dead task back with a fresh attempt budget. */
  redrive: "redrive",
  /** The tenant gives up on a dead task: it leaves the dead-letter queue, its history stays. */
  discard: "discard",
  /** All workflow dependencies succeeded. */
  release: "release",
  /** Not run: upstream failure or a schedule misfire/overlap policy. */
  skip: "skip",
  /** The lease lapsed; the target is chosen by the retry decision (QUEUED when the attempt is not charged). */
  leaseExpired: "leaseExpired",
  /** A QUEUED task is rescheduled to a later runAt: it waits for it again (reschedule.ts has the whole rule). */
  reschedule: "reschedule",
} as const;
export type TaskTransition = (typeof TaskTransition)[keyof typeof TaskTransition];

export interface TransitionRule {
  readonly from: readonly TaskStatus[];
  readonly to: readonly TaskStatus[];
}

const S = TaskStatus;

export const TRANSITIONS: Readonly<Record<TaskTransition, TransitionRule>> = {
  promote: { from: [S.SCHEDULED], to: [S.QUEUED] },
  start: { from: [S.QUEUED, S.SCHEDULED, S.RETRYING], to: [S.RUNNING] },
  succeed: { from: [S.RUNNING], to: [S.SUCCEEDED] },
  retry: { from: [S.RUNNING], to: [S.RETRYING] },
  die: { from: [S.RUNNING], to: [S.DEAD] },
  retryDue: { from: [S.RETRYING], to: [S.QUEUED] },
  cancel: { from: [S.SCHEDULED, S.QUEUED, S.RETRYING, S.BLOCKED, S.RUNNING], to: [S.CANCELLED] },
  redrive: { from: [S.DEAD], to: [S.QUEUED] },
  discard: { from: [S.DEAD], to: [S.CANCELLED] },
  release: { from: [S.BLOCKED], to: [S.QUEUED] },
  skip: { from: [S.BLOCKED, S.SCHEDULED, S.QUEUED], to: [S.SKIPPED] },
  leaseExpired: { from: [S.RUNNING], to: [S.QUEUED, S.RETRYING, S.DEAD] },
  reschedule: { from: [S.QUEUED], to: [S.SCHEDULED] },
};

export function canTransition(name: TaskTransition, from: TaskStatus, to: TaskStatus): boolean {
  const rule = TRANSITIONS[name];
  return rule.from.includes(from) && rule.to.includes(to);
}

/** The statuses a conditional update for `name` may match (`WHERE status = ANY(...)`). */
export function allowedFrom(name: TaskTransition): readonly TaskStatus[] {
  return TRANSITIONS[name].from;
}
