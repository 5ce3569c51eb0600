import type { DeliveryOutcome } from "@tasklane/db";
import type { SendResult } from "./send-delivery.js";

/** ±20 % around each scheduled delay, so deliveries that failed together do not all retry in the same instant. */
export const RETRY_JITTER = 0.2;

/**
 * Delay before the next attempt after `failedAttempts` failures, or null when
 * WEBHOOK_RETRY_SCHEDULE is used up (schedule of n entries = n + 1 attempts).
 * A Retry-After from the receiver is a floor: we never come back sooner than asked.
 */
export function retryDelayMs(
  schedule: readonly number[],
  failedAttempts: number,
  retryAfterSeconds: number | undefined,
  random: () => number = Math.random,
): number | null {
  const base = schedule[failedAttempts - 1];
  if (base === undefined) return null;
  const r = Math.min(Math.max(random(), 0), 1);
  const jittered = base * 1000 * (1 - RETRY_JITTER + 2 * RETRY_JITTER * r);
  const floor = retryAfterSeconds === undefined ? 0 : retryAfterSeconds * 1000;
  return Math.round(Math.max(jittered, floor));
}

/**
 * Maps one send onto the delivery's next state. 2xx delivered; 410 gone (the
 * receiver asked us to stop); a refused target is abandoned without counting
 * as an attempt; everything else (3xx: redirects are not followed, 4xx, 5xx,
 * timeouts, network errors) is a failed attempt retried on the schedule, as
 * Standard Webhooks senders commonly do.
 */
export function decideOutcome(
  result: SendResult,
  attemptsBefore: number,
  schedule: readonly number[],
  random: () => number = Math.random,
): DeliveryOutcome {
  if (result.kind === "refused") return { kind: "abandoned", error: result.reason };
  if (result.kind === "response" && result.status >= 200 && result.status <= 299) {
    return { kind: "delivered", responseCode: result.status };
  }
  if (result.kind === "response" && result.status === 410) return { kind: "gone", responseCode: 410 };
  const responseCode = result.kind === "response" ? result.status : null;
  const error = result.kind === "response" ? `HTTP ${result.status}${result.snippet ? `: ${result.snippet}` : ""}` : result.error;
  const retryAfter = result.kind === "response" ? result.retryAfterSeconds : undefined;
  const delayMs = retryDelayMs(schedule, attemptsBefore + 1, retryAfter, random);
  return delayMs === null ? { kind: "exhausted", responseCode, error } : { kind: "retry", responseCode, error, delayMs };
}
