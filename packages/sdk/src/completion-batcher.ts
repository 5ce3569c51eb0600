/**
 * Coalesces a Worker's successful outcomes into completeTasks calls. Under
 * load many handlers finish within a few milliseconds of each other, and one
 * call for a hundred of them costs the gateway about what one costs alone
 * (a request, a lease lookup, one UPDATE). Each completion still resolves or
 * rejects on its own, exactly as a completeTask call would have.
 *
 * A call that failed in a way that changed nothing or may have (the gateway
 * OVERLOADED while its Postgres restarts, RATE_LIMITED, a network error, a
 * timeout) after the transport's own retries, is not the end of an outcome
 * whose lease still holds: it is held and sent again, in batches of
 * `maxBatch`, after the server's Retry-After or else a capped, jittered
 * backoff, until answered or its lease is over (then another worker may run
 * the task, and the gateway would refuse the stale token anyway). Dropped
 * instead, a handler that had finished ran a second time once its lease
 * expired, after a database blip of a few seconds. A definite answer
 * (CONFLICT, NOT_FOUND, BAD_USER_INPUT …) is never sent again.
 */
import { computeBackoffMs } from "@tasklane/core/backoff";
import { BackoffStrategy } from "@tasklane/core/statuses";
import { ErrorCode, TasklaneError, isTasklaneError, type TasklaneErrorCode } from "./errors.js";
import { failureKindOfCode } from "./retry.js";
import type { LeasesResource } from "./resources/leases.js";
import type { TaskCompletion } from "./types.js";
import { checkResult } from "./validate.js";

interface Pending {
  completion: TaskCompletion;
  /** Date.now() time past which the lease is over (the TaskRun's estimate, never later than the server's). */
  leaseDeadline: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** First wait between rounds of held outcomes without a Retry-After; doubles per failed round. */
const HELD_RETRY_BASE_MS = 250;
/** Longest wait without a Retry-After. */
const HELD_RETRY_MAX_MS = 5_000;

/** Wait before held-outcome round `round` (0 first): the server's Retry-After, else equal-jittered doubling up to the cap. */
export function heldRetryDelayMs(round: number, retryAfterSeconds: number | undefined, random: number): number {
  if (retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds) && retryAfterSeconds >= 0) return retryAfterSeconds * 1000;
  return computeBackoffMs(
    { strategy: BackoffStrategy.EXPONENTIAL, delaySeconds: HELD_RETRY_BASE_MS / 1000, maxDelaySeconds: HELD_RETRY_MAX_MS / 1000, jitter: true },
    round + 1,
    () => random,
  );
}

/** Whether a failed completeTasks call may be sent again: it changed nothing, or may have (completeTasks is idempotent). */
function worthAnotherTry(error: unknown): error is TasklaneError {
  return isTasklaneError(error) && failureKindOfCode(error.code) !== "final";
}

export class CompletionBatcher {
  #pending: Pending[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Waiting for the gateway to take them, oldest first. */
  #held: Pending[] = [];
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  /** Failed rounds since a call last went through. */
  #round = 0;
  /** The last failure that held outcomes: what a dropped one rejects with. */
  #lastError: unknown;

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
    /**
     * Outcomes held for the gateway at most; past it the newest reject at
     * once. The Worker keeps at most 2 x concurrency outcomes unreported.
     */
    private readonly maxHeld = 10_000,
    private readonly random: () => number = Math.random,
  ) {}

  /** Outcomes waiting for the gateway to answer again. */
  get heldCount(): number {
    return this.#held.length;
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
      this.#pending.push({ completion, leaseDeadline, resolve, reject });
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
    this.leases.settleMany(batch.map((p) => p.completion)).then(
      (outcomes) => {
        this.#round = 0;
        // The gateway answers again: what is held goes now rather than after its wait.
        if (this.#held.length > 0 && this.#retryTimer !== undefined) {
          clearTimeout(this.#retryTimer);
          this.#retryTimer = undefined;
          queueMicrotask(() => this.#retryHeld());
        }
        const byId = new Map(outcomes.map((o) => [o.taskId, o]));
        for (const p of batch) {
          const outcome = byId.get(p.completion.taskId);
          if (outcome?.accepted) p.resolve();
          else {
            const code = (outcome?.code ?? "INTERNAL") as TasklaneErrorCode;
            p.reject(new TasklaneError(code, outcome?.message ?? "completeTasks gave no answer for this task", { operation: "completeTasks" }));
          }
        }
      },
      (error: unknown) => {
        // A refusal of the whole call is one result's doing (one that JSON cannot carry, say):
        // each outcome goes again on its own, so the others are recorded and only that one refused.
        if (batch.length > 1 && isTasklaneError(error, ErrorCode.BAD_USER_INPUT)) {
          for (const p of batch) this.#send([p]);
          return;
        }
        if (worthAnotherTry(error)) {
          this.#hold(batch, error);
          return;
        }
        for (const p of batch) p.reject(error);
      },
    );
  }

  /** Rejects every held outcome with the failure that held it (Worker.stop() past its grace). */
  dropHeld(): void {
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    const held = this.#held;
    this.#held = [];
    for (const p of held) p.reject(this.#lastError);
  }

  #hold(batch: Pending[], error: TasklaneError): void {
    this.#lastError = error;
    const now = Date.now();
    for (const p of batch) {
      if (now >= p.leaseDeadline || this.#held.length >= this.maxHeld) p.reject(error);
      else this.#held.push(p);
    }
    if (this.#retryTimer !== undefined || this.#held.length === 0) return;
    const timer = setTimeout(() => this.#retryHeld(), heldRetryDelayMs(this.#round++, error.retryAfterSeconds, this.random()));
    // Held outcomes alone do not keep a process alive that has nothing else to do.
    timer.unref?.();
    this.#retryTimer = timer;
  }

  /** One round: what is held and still within its lease, again in batches of maxBatch. */
  #retryHeld(): void {
    this.#retryTimer = undefined;
    const held = this.#held;
    this.#held = [];
    const now = Date.now();
    const live: Pending[] = [];
    for (const p of held) {
      if (now >= p.leaseDeadline) p.reject(this.#lastError);
      else live.push(p);
    }
    for (let i = 0; i < live.length; i += this.maxBatch) this.#send(live.slice(i, i + this.maxBatch));
  }
}
