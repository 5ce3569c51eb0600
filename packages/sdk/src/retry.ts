/**
 * When the transport tries a call again, and how long it waits.
 *
 * The rule is about duplicates, not about error codes alone:
 * - a failure that proves the server did not execute the operation ("refused":
 *   RATE_LIMITED or OVERLOADED answered by the gateway, HTTP 429, connection
 *   refused) is retried for every operation — the contract guarantees such a
 *   refusal changed nothing;
 * - a failure that leaves the outcome unknown ("ambiguous": timeout, reset
 *   connection, HTTP 5xx, INTERNAL_SERVER_ERROR) is retried only for
 *   idempotent operations: queries, and mutations whose repetition cannot
 *   create a second effect (see each resource's `idempotent` flag). A
 *   submitTask/submitTasks/submitWorkflow counts as idempotent only when it
 *   carries an idempotencyKey (every input of a batch must). Without one, the
 *   error is thrown and the caller decides (e.g. look the task up first);
 * - anything else is a definite answer ("final") and is never retried.
 */
import { ErrorCode, type TasklaneErrorCode } from "./errors.js";

export interface RetryOptions {
  /**
   * Attempts in all, the first included; 1 disables retries.
   * @defaultValue 3
   */
  attempts?: number;
  /**
   * First backoff step when the server gave no Retry-After; it doubles per
   * attempt, with equal jitter.
   * @defaultValue 250
   */
  baseDelayMs?: number;
  /**
   * Longest single wait between attempts. A Retry-After longer than this ends
   * the retries: the error is thrown with `retryAfterSeconds` so the caller can
   * schedule the retry itself.
   * @defaultValue 30_000
   */
  maxDelayMs?: number;
}

export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: Readonly<RetryPolicy> = { attempts: 3, baseDelayMs: 250, maxDelayMs: 30_000 };

export function resolveRetry(options: RetryOptions | false | undefined): RetryPolicy {
  if (options === false) return { ...DEFAULT_RETRY, attempts: 1 };
  const policy = { ...DEFAULT_RETRY, ...definedOnly(options ?? {}) };
  if (!Number.isInteger(policy.attempts) || policy.attempts < 1) throw new RangeError(`retry.attempts must be an integer >= 1, got ${policy.attempts}`);
  if (!(policy.baseDelayMs >= 0)) throw new RangeError(`retry.baseDelayMs must be >= 0, got ${policy.baseDelayMs}`);
  if (!(policy.maxDelayMs >= 0)) throw new RangeError(`retry.maxDelayMs must be >= 0, got ${policy.maxDelayMs}`);
  return policy;
}

function definedOnly(options: RetryOptions): Partial<RetryPolicy> {
  const out: Partial<RetryPolicy> = {};
  if (options.attempts !== undefined) out.attempts = options.attempts;
  if (options.baseDelayMs !== undefined) out.baseDelayMs = options.baseDelayMs;
  if (options.maxDelayMs !== undefined) out.maxDelayMs = options.maxDelayMs;
  return out;
}

/** What a failed attempt says about the server's state. */
export type FailureKind =
  /** The server certainly did not execute the operation. */
  | "refused"
  /** It may have. */
  | "ambiguous"
  /** A definite answer that trying again will not change. */
  | "final";

/** For errors the gateway answered with a contract code. */
export function failureKindOfCode(code: TasklaneErrorCode): FailureKind {
  switch (code) {
    case ErrorCode.RATE_LIMITED:
    case ErrorCode.OVERLOADED:
      return "refused";
    case ErrorCode.INTERNAL_SERVER_ERROR:
    case "NETWORK_ERROR":
    case "TIMEOUT":
      return "ambiguous";
    case ErrorCode.UNAUTHENTICATED:
    case ErrorCode.FORBIDDEN:
    case ErrorCode.NOT_FOUND:
    case ErrorCode.BAD_USER_INPUT:
    case ErrorCode.CONFLICT:
    case ErrorCode.QUOTA_EXCEEDED:
    case "ABORTED":
    case "BAD_RESPONSE":
      return "final";
    default: {
      const unknownCode: never = code;
      throw new Error(`Unexpected error code ${String(unknownCode)}`);
    }
  }
}

export function shouldRetry(kind: FailureKind, idempotent: boolean): boolean {
  return kind === "refused" || (kind === "ambiguous" && idempotent);
}

/**
 * Wait before the attempt after `failedAttempt` (1-based), or null when the
 * server asks for a longer pause than the policy allows.
 */
export function retryDelayMs(
  failedAttempt: number,
  retryAfterSeconds: number | undefined,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number | null {
  if (retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds) && retryAfterSeconds >= 0) {
    const ms = retryAfterSeconds * 1000;
    return ms > policy.maxDelayMs ? null : ms;
  }
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, failedAttempt - 1));
  // Equal jitter: never less than half the step, so a herd of clients still spreads out without hammering.
  return step / 2 + random() * (step / 2);
}

/** Retry-After is delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null || header.trim() === "") return undefined;
  const trimmed = header.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}
