/**
 * Where a Worker keeps the outcomes (completions and failures) the gateway
 * could not take: a call that failed in a way that changed nothing or may
 * have (the gateway OVERLOADED while its Postgres restarts, RATE_LIMITED, a
 * network error, a timeout) after the transport's own retries is not the end
 * of an outcome whose lease still holds. It is held and sent again, after the
 * server's Retry-After or else a capped, jittered backoff, until answered or
 * its lease is over (then another worker may run the task, and the gateway
 * would refuse the stale token anyway). Dropped instead, a handler that had
 * finished ran a second time once its lease expired, after a database blip of
 * a few seconds. A definite answer (CONFLICT, NOT_FOUND, BAD_USER_INPUT …) is
 * never sent again.
 *
 * One hold serves every kind of outcome call through its lanes (one per
 * call: completeTasks, failTask), so they share one wait, one cap and one
 * "the gateway answers again": any call that goes through sends everything
 * held at once.
 */
import { computeBackoffMs } from "@tasklane/core/backoff";
import { BackoffStrategy } from "@tasklane/core/statuses";
import { isTasklaneError, type TasklaneError } from "./errors.js";
import { failureKindOfCode } from "./retry.js";

/** What a lane holds: an outcome waiting for its call, with its lease's end and its caller's rejection. */
export interface HeldOutcome {
  /** Date.now() time past which the lease is over (the TaskRun's estimate, never later than the server's). */
  readonly leaseDeadline: number;
  reject(error: unknown): void;
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

/** Whether a failed outcome call may be sent again: it changed nothing, or may have (outcome calls are fenced by their lease token). */
export function worthAnotherTry(error: unknown): error is TasklaneError {
  return isTasklaneError(error) && failureKindOfCode(error.code) !== "final";
}

export interface OutcomeHoldOptions {
  /**
   * Outcomes held at most, over every lane; past it the newest reject at once.
   * The Worker keeps at most 2 x concurrency outcomes unreported.
   * @defaultValue 10_000
   */
  maxHeld?: number;
  /** @defaultValue Math.random */
  random?: () => number;
}

/** One kind of outcome call's share of the hold: `resend` sends its outcomes still within their leases again. */
export interface OutcomeLane<T extends HeldOutcome> {
  /** Holds `outcomes`, whose call failed with `error`, if worth another try (else rejects them); false when it is not worth one. */
  hold(outcomes: readonly T[], error: unknown): boolean;
  /** Outcomes this lane holds now. */
  readonly count: number;
}

interface LaneState {
  readonly count: number;
  /** Rejects what is past its lease with `error`, sends the rest again. */
  retry(now: number, error: unknown): void;
  /** Rejects everything held with `error`. */
  drop(error: unknown): void;
}

export class OutcomeHold {
  readonly #lanes: LaneState[] = [];
  readonly #maxHeld: number;
  readonly #random: () => number;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  /** Failed rounds since a call last went through. */
  #round = 0;
  /** The last failure that held outcomes: what a dropped one rejects with. */
  #lastError: unknown;

  constructor(options: OutcomeHoldOptions = {}) {
    this.#maxHeld = options.maxHeld ?? 10_000;
    this.#random = options.random ?? Math.random;
  }

  /** Outcomes waiting for the gateway to answer again, over every lane. */
  get heldCount(): number {
    let n = 0;
    for (const lane of this.#lanes) n += lane.count;
    return n;
  }

  /** A lane for one kind of outcome call; `resend` gets its live held outcomes at each round. */
  lane<T extends HeldOutcome>(resend: (outcomes: T[]) => void): OutcomeLane<T> {
    let held: T[] = [];
    const state: LaneState = {
      get count() {
        return held.length;
      },
      retry: (now, error) => {
        const live: T[] = [];
        for (const o of held) {
          if (now >= o.leaseDeadline) o.reject(error);
          else live.push(o);
        }
        held = [];
        if (live.length > 0) resend(live);
      },
      drop: (error) => {
        const dropped = held;
        held = [];
        for (const o of dropped) o.reject(error);
      },
    };
    this.#lanes.push(state);
    return {
      hold: (outcomes, error) => {
        if (!worthAnotherTry(error)) return false;
        this.#lastError = error;
        const now = Date.now();
        let total = this.heldCount;
        for (const o of outcomes) {
          if (now >= o.leaseDeadline || total >= this.#maxHeld) o.reject(error);
          else {
            held.push(o);
            total++;
          }
        }
        this.#arm(error);
        return true;
      },
      get count() {
        return held.length;
      },
    };
  }

  /**
   * A call went through: the gateway answers again, so what is held goes now rather than after its
   * wait. Cheap when nothing is held (every successful outcome call makes it).
   */
  answered(): void {
    this.#round = 0;
    if (this.#retryTimer === undefined) return;
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    queueMicrotask(() => this.#retryHeld());
  }

  /** Rejects every held outcome with the failure that held it (Worker.stop() past its grace). */
  drop(): void {
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    for (const lane of this.#lanes) lane.drop(this.#lastError);
  }

  #arm(error: TasklaneError): void {
    if (this.#retryTimer !== undefined || this.heldCount === 0) return;
    const timer = setTimeout(() => this.#retryHeld(), heldRetryDelayMs(this.#round++, error.retryAfterSeconds, this.#random()));
    // Held outcomes alone do not keep a process alive that has nothing else to do.
    timer.unref?.();
    this.#retryTimer = timer;
  }

  /** One round: every lane's held outcomes still within their lease, sent again. */
  #retryHeld(): void {
    this.#retryTimer = undefined;
    const now = Date.now();
    for (const lane of this.#lanes) lane.retry(now, this.#lastError);
  }
}
