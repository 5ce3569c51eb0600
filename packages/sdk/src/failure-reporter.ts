/**
 * Reports a Worker's failed attempts (failTask, one call each: failures are
 * few beside completions, and each carries its own message). A call that
 * failed in a way worth another try is held in the Worker's OutcomeHold
 * (outcome-hold.ts), beside the completions, and sent again while its lease
 * lasts: a failure reported during a gateway outage was otherwise lost, and
 * its task waited RUNNING for the lease to expire before it was retried.
 */
import { OutcomeHold, type HeldOutcome, type OutcomeLane } from "./outcome-hold.js";
import type { LeasesResource } from "./resources/leases.js";

interface PendingFailure extends HeldOutcome {
  readonly taskId: string;
  readonly leaseToken: string;
  readonly message: string;
  readonly retryable: boolean;
  readonly resolve: () => void;
  /**
   * It is held after a failed call, so it goes again as a resend (fail's `resend`): the
   * transport's earlier tries of that call may have been recorded, whatever ended the last.
   */
  maybeRecorded: boolean;
}

export class FailureReporter {
  readonly #held: OutcomeLane<PendingFailure>;

  constructor(
    private readonly leases: LeasesResource,
    /** Where failures the gateway could not take wait (shared with the Worker's completions). */
    private readonly hold: OutcomeHold = new OutcomeHold(),
  ) {
    this.#held = hold.lane<PendingFailure>((live) => {
      for (const f of live) this.#send(f);
    });
  }

  /** Failures waiting for the gateway to answer again. */
  get heldCount(): number {
    return this.#held.count;
  }

  /**
   * Resolves once recorded; rejects with the TasklaneError failTask threw. A
   * failure worth another try is held until `leaseDeadline` (Date.now() time)
   * and rejects with it only then.
   */
  fail(taskId: string, leaseToken: string, message: string, retryable: boolean, leaseDeadline: number): Promise<void> {
    return new Promise<void>((resolve, reject) => this.#send({ taskId, leaseToken, message, retryable, leaseDeadline, resolve, reject, maybeRecorded: false }));
  }

  #send(f: PendingFailure): void {
    this.leases.fail(f.taskId, f.leaseToken, f.message, f.retryable, f.maybeRecorded ? { resend: true } : undefined).then(
      () => {
        this.hold.answered();
        f.resolve();
      },
      (error: unknown) => {
        f.maybeRecorded = true;
        if (!this.#held.hold([f], error)) f.reject(error);
      },
    );
  }
}
