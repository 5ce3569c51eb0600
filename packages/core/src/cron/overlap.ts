/**
 * What to do with a due occurrence when the schedule's previous run may still
 * be going (contract: OverlapPolicy).
 */
import { assertNever } from "../assert-never.js";
import { OverlapPolicy } from "../statuses.js";

export const OverlapDecision = {
  /** Materialise the run now. */
  START: "start",
  /** Record the occurrence as a SKIPPED run and start nothing. */
  SKIP: "skip",
  /** Materialise the run held back; it starts when the previous run finishes. */
  QUEUE: "queue",
  /** Request cancellation of the previous run, then start this one. */
  CANCEL_PREVIOUS_THEN_START: "cancel_previous_then_start",
} as const;
export type OverlapDecision = (typeof OverlapDecision)[keyof typeof OverlapDecision];

/** With no unfinished previous run every policy starts; otherwise the policy decides. */
export function decideOverlap(policy: OverlapPolicy, previousRunUnfinished: boolean): OverlapDecision {
  switch (policy) {
    case OverlapPolicy.ALLOW:
      return OverlapDecision.START;
    case OverlapPolicy.SKIP:
      return previousRunUnfinished ? OverlapDecision.SKIP : OverlapDecision.START;
    case OverlapPolicy.QUEUE:
      return previousRunUnfinished ? OverlapDecision.QUEUE : OverlapDecision.START;
    case OverlapPolicy.CANCEL_RUNNING:
      return previousRunUnfinished ? OverlapDecision.CANCEL_PREVIOUS_THEN_START : OverlapDecision.START;
    default:
      return assertNever(policy);
  }
}

/** The lastError (and event reason) of a run the overlap policy SKIPPED. */
export const OVERLAP_SKIP_REASON = "the schedule's previous run was unfinished (overlapPolicy SKIP)";
