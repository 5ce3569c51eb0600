/**
 * Coalesces a Worker's successful outcomes into completeTasks calls. Under
 * load many handlers finish within a few milliseconds of each other, and one
 * call for a hundred of them costs the gateway about what one costs alone
 * (a request, a lease lookup, one UPDATE). Each completion still resolves or
 * rejects on its own, exactly as a completeTask call would have.
 *
 * A call that failed in a way worth another try is held in the Worker's
 * OutcomeHold (outcome-hold.ts) and its completions sent again, in batches of
 * `maxBatch`, while their leases last.
 */
import { ErrorCode, TasklaneError, isContractCode, isTasklaneError } from "./errors.js";
import { OutcomeHold, type OutcomeLane } from "./outcome-hold.js";
import type { LeasesResource } from "./resources/leases.js";
import type { TaskCompletion } from "./types.js";
import { checkResult } from "./validate.js";

interface Pending {
  completion: TaskCompletion;
  /** Date.now() time past which the lease is over (the TaskRun's estimate, never later than the server's). */
  leaseDeadline: number;
  resolve: () => void;
  reject: (error: unknown) => void;
  /**
   * It is held after a failed call, so it goes again as a resend (settleMany's `resend`): the
   * transport's earlier tries of that call may have been recorded, whatever ended the last.
   */
  maybeRecorded: boolean;
}

/**
 * One refused item of a completeTasks answer as completeTask would have thrown it: its code
 * one of the contract's (an item answered with no code, or none at all, is INTERNAL_SERVER_ERROR),
 * and in `extensions.code` too, as every error the gateway sends has it.
 */
function refusalOf(outcome: { code: string | null; message: string | null } | undefined): TasklaneError {
  const code = outcome !== undefined && isContractCode(outcome.code) ? outcome.code : ErrorCode.INTERNAL_SERVER_ERROR;
  const message = outcome === undefined ? "completeTasks gave no answer for this task" : (outcome.message ?? `completeTasks refused this task (${String(outcome.code)})`);
  return new TasklaneError(code, message, { operation: "completeTasks", extensions: { code } });
}

export class CompletionBatcher {
  #pending: Pending[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #held: OutcomeLane<Pending>;

  constructor(
    private readonly leases: LeasesResource,
    /** A flush never carries more than this (the gateway accepts up to 500). */
    private readonly maxBatch = 100,
    /**
     * How long the first completion of a batch waits for company. A trickle of
     * outcomes is where it counts: at 200 tasks/s 2 ms sent ~170 calls a
     * second of one or two outcomes each, and every call costs the gateway a
     * few hundred microseconds whatever it carries (10 ms, as the PUSH
     * worker's completion window; test/bench/findings.md).
     */
    private readonly maxDelayMs = 10,
    /** Where completions the gateway could not take wait (shared with the Worker's failures). */
    private readonly hold: OutcomeHold = new OutcomeHold(),
  ) {
    this.#held = hold.lane<Pending>((live) => {
      for (let i = 0; i < live.length; i += this.maxBatch) this.#send(live.slice(i, i + this.maxBatch));
    });
  }

  /** Completions waiting for the gateway to answer again. */
  get heldCount(): number {
    return this.#held.count;
  }

  /**
   * Resolves once recorded; rejects with the TasklaneError completeTask would
   * have thrown. A failure worth another try is held until `leaseDeadline`
   * (Date.now() time) and rejects with it only then.
   */
  complete(completion: TaskCompletion, leaseDeadline: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      // Refused alone, before it can take a batch's call down with it.
      checkResult("completeTasks", completion.result);
      this.#pending.push({ completion, leaseDeadline, resolve, reject, maybeRecorded: false });
      if (this.#pending.length >= this.maxBatch) this.#flush();
      else this.#timer ??= setTimeout(() => this.#flush(), this.maxDelayMs);
    });
  }

  #flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#pending;
    this.#pending = [];
    this.#send(batch);
  }

  #send(batch: Pending[]): void {
    if (batch.length === 0) return;
    const resend = batch.some((p) => p.maybeRecorded);
    this.leases.settleMany(batch.map((p) => p.completion), resend ? { resend } : undefined).then(
      (outcomes) => {
        this.hold.answered();
        const byId = new Map(outcomes.map((o) => [o.taskId, o]));
        for (const p of batch) {
          const outcome = byId.get(p.completion.taskId);
          if (outcome?.accepted) p.resolve();
          else p.reject(refusalOf(outcome));
        }
      },
      (error: unknown) => {
        // A refusal of the whole call is one result's doing (one that JSON cannot carry, say):
        // each outcome goes again on its own, so the others are recorded and only that one refused.
        if (batch.length > 1 && isTasklaneError(error, ErrorCode.BAD_USER_INPUT)) {
          for (const p of batch) this.#send([p]);
          return;
        }
        for (const p of batch) p.maybeRecorded = true;
        if (this.#held.hold(batch, error)) return;
        for (const p of batch) p.reject(error);
      },
    );
  }
}
