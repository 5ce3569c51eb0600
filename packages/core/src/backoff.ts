/**
 * Retry timing and the retry-or-dead decision. Pure: randomness is injected so
 * tests (and replays) are deterministic.
 */
import { assertNever } from "./assert-never.js";
import { MAX_BACKOFF_SECONDS } from "./limits.js";
import { BackoffStrategy } from "./statuses.js";

export interface BackoffPolicy {
  strategy: BackoffStrategy;
  delaySeconds: number;
  /** Cap on one delay; null/undefined means MAX_BACKOFF_SECONDS (24 h). */
  maxDelaySeconds?: number | null;
  /** Equal jitter; null/undefined means no jitter. */
  jitter?: boolean | null;
}

/** A policy with every field decided, as stored on a task. */
export interface ResolvedBackoffPolicy extends BackoffPolicy {
  maxDelaySeconds: number;
  jitter: boolean;
}

/** @defaultValue EXPONENTIAL from 1 s, capped at 1 h, with jitter — spreads retry storms. */
export const DEFAULT_BACKOFF: Readonly<ResolvedBackoffPolicy> = {
  strategy: BackoffStrategy.EXPONENTIAL,
  delaySeconds: 1,
  maxDelaySeconds: 3600,
  jitter: true,
};

/**
 * Fills what the caller left null with DEFAULT_BACKOFF. The contract reads an
 * omitted/null field as "use the default", so a given policy without a cap
 * still gets the 1 h default cap rather than none.
 */
export function resolveBackoff(given: BackoffPolicy | null | undefined): ResolvedBackoffPolicy {
  if (given == null) return { ...DEFAULT_BACKOFF };
  return {
    strategy: given.strategy,
    delaySeconds: given.delaySeconds,
    maxDelaySeconds: given.maxDelaySeconds ?? DEFAULT_BACKOFF.maxDelaySeconds,
    jitter: given.jitter ?? DEFAULT_BACKOFF.jitter,
  };
}

const MAX_BACKOFF_MS = MAX_BACKOFF_SECONDS * 1000;

function nonNegativeFinite(n: number): number {
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/**
 * Delay before the retry that follows failed attempt `failedAttempt` (1-based).
 * The cap also bounds policies that never went through validation (rows from
 * older versions), so the result is always a finite integer in [0, 24 h].
 */
export function computeBackoffMs(
  policy: BackoffPolicy,
  failedAttempt: number,
  random: () => number = Math.random,
): number {
  const baseMs = nonNegativeFinite(policy.delaySeconds) * 1000;
  const capMs = Math.min(
    policy.maxDelaySeconds == null ? MAX_BACKOFF_MS : nonNegativeFinite(policy.maxDelaySeconds) * 1000,
    MAX_BACKOFF_MS,
  );
  if (baseMs === 0 || capMs === 0) return 0;
  const n = Number.isFinite(failedAttempt) ? Math.max(1, Math.floor(failedAttempt)) : Number.MAX_SAFE_INTEGER;

  let raw: number;
  switch (policy.strategy) {
    case BackoffStrategy.EXPONENTIAL:
      // 2^1023 is the largest finite power; past it the product would be
      // Infinity, which min() handles, but keep the arithmetic finite anyway.
      raw = baseMs * 2 ** Math.min(n - 1, 1023);
      break;
    case BackoffStrategy.LINEAR:
      raw = baseMs * n;
      break;
    case BackoffStrategy.FIXED:
      raw = baseMs;
      break;
    default:
      return assertNever(policy.strategy);
  }
  const d = Math.ceil(Math.min(raw, capMs));
  if (!policy.jitter) return d;
  // Equal jitter: half fixed, half random, so a requested delay never collapses
  // to an immediate retry while retries of many tasks still spread out.
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.min(d, Math.ceil(d / 2 + r * (d / 2)));
}

export type FailureDecision =
  | { kind: "retry"; delayMs: number }
  | { kind: "dead"; reason: "exhausted" | "non_retryable" };

export interface FailureContext {
  /** The attempt that just failed, 1-based. */
  attempt: number;
  /** Attempts in all, first included. */
  maxAttempts: number;
  retryable: boolean;
  backoff: BackoffPolicy;
  /** Server hint (HTTP Retry-After) from a push endpoint. */
  retryAfterSeconds?: number | undefined;
  random?: () => number;
}

export function decideAfterFailure(ctx: FailureContext): FailureDecision {
  // Non-retryable wins over exhausted: it is the more specific reason to report.
  if (!ctx.retryable) return { kind: "dead", reason: "non_retryable" };
  if (!(ctx.attempt < ctx.maxAttempts)) return { kind: "dead", reason: "exhausted" };
  let delayMs = computeBackoffMs(ctx.backoff, ctx.attempt, ctx.random);
  const hint = ctx.retryAfterSeconds;
  if (hint !== undefined && Number.isFinite(hint) && hint > 0) {
    // Honour the server's hint but never wait less than our own backoff, and
    // never let a hostile header park the task for longer than a day.
    delayMs = Math.min(Math.max(delayMs, Math.ceil(hint * 1000)), MAX_BACKOFF_MS);
  }
  return { kind: "retry", delayMs };
}
