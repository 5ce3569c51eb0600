/**
 * When the PUSH worker records again an outcome whose statement failed
 * because Postgres could not be reached (CompletionBatcher). Pure: the
 * batcher owns the one timer.
 */
import { BackoffStrategy, computeBackoffMs } from "@tasklane/core";

/** First wait after a failed round; doubles per failed round. */
export const OUTCOME_RETRY_BASE_MS = 200;
/**
 * Longest wait between rounds: once Postgres answers again, held outcomes are
 * recorded within this (plus jitter's share of it). One statement per round
 * per worker process, so a fleet probing a Postgres that is still down costs it
 * little.
 */
export const OUTCOME_RETRY_MAX_MS = 2_000;
/**
 * Outcomes held at most, per worker process. The fetcher already stops
 * starting attempts at 2 × WORKER_CONCURRENCY unrecorded ones (an outcome
 * waiting here keeps its place), so this is a backstop; past it the newest
 * are dropped (their leases run out and the tasks run again) and said so.
 */
export const MAX_HELD_OUTCOMES = 20_000;

/**
 * Wait before retry round `round` (0 for the first), with equal jitter: half
 * the step fixed, half random, so many workers that lost Postgres together do
 * not all come back in the same millisecond. `random` in [0, 1).
 */
export function outcomeRetryDelayMs(round: number, random: number, baseMs = OUTCOME_RETRY_BASE_MS, maxMs = OUTCOME_RETRY_MAX_MS): number {
  return computeBackoffMs(
    { strategy: BackoffStrategy.EXPONENTIAL, delaySeconds: baseMs / 1000, maxDelaySeconds: maxMs / 1000, jitter: true },
    round + 1,
    () => random,
  );
}

/**
 * Until when, on this process's monotonic clock (performance.now()), an
 * attempt's lease lasts at the latest. The lease counts from the attempt's
 * start (startedAt; runAt for one started ahead, which begins `startInMs`
 * after the start statement answered), both by the database's clock; counting
 * it from `answeredAt`, after the statement ran, errs late by the answer's way
 * back: a record sent after the lease ran out is refused as stale anyway.
 */
export function leaseEndsAt(
  lease: { leaseExpiresAt: Date; startInMs: number; task: { startedAt: Date | null; runAt: Date } },
  answeredAt: number,
): number {
  return answeredAt + lease.startInMs + (lease.leaseExpiresAt.getTime() - (lease.task.startedAt ?? lease.task.runAt).getTime());
}
