/**
 * Sends tasks in batches, one submitTasks call each (all or nothing per
 * batch), in file order. A batch the platform refuses for load
 * (RATE_LIMITED, OVERLOADED: the contract says nothing was written) is sent
 * again after the Retry-After it gave, a bounded number of times. Any other
 * failure stops the run with SubmitStopped, which says how many were
 * accepted so the user can resume with --skip, and whether the failed batch
 * may have been accepted after all (no answer came back).
 *
 * The SDK's transport retries a refused call itself first (3 attempts,
 * waiting a Retry-After of up to 30 s); these retries come on top, for a
 * platform that stays busy longer than that while a big file goes in.
 *
 * Two signals stop a run early (Ctrl-C in submit.ts): `stop` lets the batch
 * in flight finish, so the count accepted is exact, and ends a wait at once;
 * `abort` also gives up on the batch in flight, whose outcome is then unknown.
 */
import { TasklaneError, isTasklaneError, type SubmitTaskInput } from "@tasklane/sdk";
import { failureKindOfCode } from "@tasklane/sdk/retry";
import { connectionRefused } from "@tasklane/sdk/transport";
import { BackoffStrategy, computeBackoffMs } from "@tasklane/core";
import { Interrupted } from "../errors.js";

/** submitTasks calls of this many tasks: the size the benchmark found cheapest per task for the gateway. */
export const DEFAULT_BATCH_SIZE = 500;
/** Tries again of one refused batch. */
export const DEFAULT_REFUSAL_RETRIES = 5;
/** A Retry-After longer than this stops the run instead of holding the terminal. */
export const MAX_REFUSAL_WAIT_MS = 300_000;
/** Without a Retry-After: 1 s, 2 s, 4 s … up to 30 s (core's backoff, as the SDK's held outcomes wait). */
const NO_RETRY_AFTER_BACKOFF = { strategy: BackoffStrategy.EXPONENTIAL, delaySeconds: 1, maxDelaySeconds: 30, jitter: false } as const;

export interface Refusal {
  error: TasklaneError;
  /** 1 for the first retry. */
  retry: number;
  waitMs: number;
  /** Index of the batch's first task. */
  from: number;
}

export interface SubmitBatchesOptions {
  batchSize: number;
  /** Tries again of a refused batch; 0: none. */
  retries: number;
  /** One submitTasks call; answers the ids in input order. `signal` is `abort`. */
  send(batch: SubmitTaskInput[], signal?: AbortSignal): Promise<string[]>;
  /** Waits `ms`, or less when `signal` (`stop`) aborts. */
  wait(ms: number, signal?: AbortSignal): Promise<unknown>;
  /** Stop before the next batch (and end a wait): SubmitStopped with an Interrupted cause. */
  stop?: AbortSignal;
  /** Give up on the batch in flight too. */
  abort?: AbortSignal;
  /** After each accepted batch, with the tasks accepted so far. */
  onAccepted?(accepted: number): void;
  /** Before waiting out a refusal. */
  onRefused?(refusal: Refusal): void;
}

/** A run stopped at the batch [from, to): the tasks before `from` were accepted. */
export class SubmitStopped extends Error {
  /** Tasks accepted, in order, before the failed batch. */
  readonly accepted: number;
  readonly from: number;
  readonly to: number;
  /**
   * True when no answer came back (timeout, reset, 5xx): the failed batch may
   * have been accepted. False for a definite refusal: nothing of it was written.
   */
  readonly outcomeUnknown: boolean;
  readonly ids: string[];

  constructor(ids: string[], from: number, to: number, cause: unknown) {
    super(`submit stopped after ${ids.length} tasks`, { cause });
    this.name = "SubmitStopped";
    this.ids = ids;
    this.accepted = ids.length;
    this.from = from;
    this.to = to;
    this.outcomeUnknown = outcomeUnknown(cause);
  }
}

/** Answers every new task's id, in input order; throws SubmitStopped. */
export async function submitInBatches(tasks: readonly SubmitTaskInput[], options: SubmitBatchesOptions): Promise<string[]> {
  const ids: string[] = [];
  for (let from = 0; from < tasks.length; from += options.batchSize) {
    const batch = tasks.slice(from, from + options.batchSize);
    for (let retry = 1; ; retry++) {
      // Nothing of this batch has been written yet (first try, or after a refusal).
      if (options.stop?.aborted === true || options.abort?.aborted === true) throw new SubmitStopped(ids, from, from + batch.length, new Interrupted());
      try {
        ids.push(...(await options.send(batch, options.abort)));
        break;
      } catch (error: unknown) {
        const refused = isTasklaneError(error, "RATE_LIMITED", "OVERLOADED") ? error : null;
        const waitMs = refused === null ? null : refusalWaitMs(refused, retry);
        if (refused === null || waitMs === null || retry > options.retries) throw new SubmitStopped(ids, from, from + batch.length, error);
        options.onRefused?.({ error: refused, retry, waitMs, from });
        await options.wait(waitMs, options.stop);
      }
    }
    options.onAccepted?.(ids.length);
  }
  return ids;
}

/**
 * Whether a batch that failed with `cause` may have been written: no answer
 * (timeout, reset, 5xx), or a call given up by the user (ABORTED: the request
 * may have reached the gateway). A connection refused never sent it.
 */
function outcomeUnknown(cause: unknown): boolean {
  if (cause instanceof Interrupted) return false;
  if (!(cause instanceof TasklaneError)) return true;
  if (cause.code === "ABORTED") return true;
  if (cause.code === "NETWORK_ERROR" && connectionRefused(cause.cause)) return false;
  return failureKindOfCode(cause.code) === "ambiguous";
}

/** How long to wait before the `retry`th try again: the Retry-After given, else doubling from 1 s; null past MAX_REFUSAL_WAIT_MS. */
export function refusalWaitMs(error: TasklaneError, retry: number): number | null {
  const given = error.retryAfterSeconds;
  if (given !== undefined && Number.isFinite(given) && given >= 0) {
    const ms = given * 1000;
    return ms > MAX_REFUSAL_WAIT_MS ? null : ms;
  }
  return computeBackoffMs(NO_RETRY_AFTER_BACKOFF, retry);
}
