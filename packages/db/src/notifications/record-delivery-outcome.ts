import { assertNever } from "@tasklane/core";
import type { Database } from "../database.js";
import { storableText } from "../pg-text.js";

/**
 * Consecutive failed attempts (across all of a webhook's deliveries) after
 * which the webhook is disabled — checked only when a delivery has used up
 * its whole retry schedule. A receiver that is down for less than the
 * schedule therefore gets every event once it is back, however many events
 * piled up (the chaos suite's webhook outage found 20 queued events disabling
 * the webhook within seconds and abandoning the rest); a dead endpoint still
 * stops costing the fleet work. The tenant sees why in `disabled_reason` and
 * can re-enable it.
 * @defaultValue 20
 */
export const WEBHOOK_DISABLE_AFTER_FAILURES = 20;

/** Why a 410 disables its webhook at once: the receiver said the endpoint is gone for good. */
export const GONE_REASON = "endpoint answered 410 Gone";

/** What one claimed delivery came to. */
export type DeliveryOutcome =
  /** 2xx: done; the webhook's failure streak resets. */
  | { kind: "delivered"; responseCode: number }
  /** A failed attempt with schedule left: PENDING again at now() + delayMs. */
  | { kind: "retry"; responseCode: number | null; error: string; delayMs: number }
  /** A failed attempt and the retry schedule is used up: FAILED. */
  | { kind: "exhausted"; responseCode: number | null; error: string }
  /** 410 Gone: FAILED at once and the webhook is disabled. */
  | { kind: "gone"; responseCode: number }
  /** Never sent (refused target, disabled webhook): FAILED, attempts unchanged, webhook health untouched. */
  | { kind: "abandoned"; error: string };

/** The claim this process holds; an outcome is recorded only while it still holds it. */
export interface DeliveryFence {
  id: string;
  attempts: number;
  lockedUntil: Date;
}

const MAX_STORED_ERROR = 2000;

/** Conditional update of the delivery: still PENDING, still under our lock, no attempt recorded by anyone else. */
function deliveryUpdate(set: string): string {
  return `UPDATE webhook_deliveries d SET ${set}, locked_until = NULL FROM p
    WHERE d.id = p.delivery_id AND d.status = 'PENDING' AND d.attempts = p.held_attempts AND d.locked_until = p.held_lock
    RETURNING d.webhook_id`;
}

/** One failed attempt more on the webhook, while the delivery still has retries left: never disables. */
const STREAK_INCREMENT = `UPDATE webhooks w SET failure_streak = w.failure_streak + 1 FROM upd WHERE w.id = upd.webhook_id`;

/** A delivery failed for good: one failed attempt more, and the webhook is disabled (once, keeping the first reason) at the threshold. */
const STREAK_UPDATE = `UPDATE webhooks w SET failure_streak = w.failure_streak + 1,
    enabled = w.enabled AND w.failure_streak + 1 < p.disable_after,
    disabled_reason = CASE WHEN w.enabled AND w.failure_streak + 1 >= p.disable_after THEN p.streak_reason
                      ELSE w.disabled_reason END
  FROM upd, p WHERE w.id = upd.webhook_id
  RETURNING w.id, w.enabled, w.disabled_reason, w.deleted_at`;

/**
 * The webhook's other deliveries waiting for an attempt, once it is disabled
 * (410, the failure threshold): FAILED now, in the words the claim would
 * abandon them with at their next attempt, rather than PENDING in the log
 * until then (up to the schedule's longest step) and each claimed only to be
 * abandoned. Ones in flight elsewhere keep their claims; the recorded one is
 * upd's. A webhook deleted (which gives it no reason of its own) while some
 * were in flight has them say so, as the claim would.
 */
const STOP_WAITING = `UPDATE webhook_deliveries d SET status = 'FAILED',
    last_error = CASE WHEN wh.deleted_at IS NOT NULL THEN 'webhook was deleted'
                      ELSE 'webhook is disabled' || COALESCE(': ' || wh.disabled_reason, '') END
  FROM wh, p WHERE NOT wh.enabled AND d.webhook_id = wh.id AND d.id <> p.delivery_id AND d.status = 'PENDING'
    AND (d.locked_until IS NULL OR d.locked_until < now())`;

function statementFor(outcome: DeliveryOutcome): { upd: string; webhook: string | null; stop?: boolean } {
  switch (outcome.kind) {
    case "delivered":
      return {
        upd: deliveryUpdate(`status = 'DELIVERED', delivered_at = now(), attempts = d.attempts + 1,
          last_response_code = p.code, last_error = NULL`),
        webhook: `UPDATE webhooks w SET failure_streak = 0 FROM upd WHERE w.id = upd.webhook_id AND w.failure_streak <> 0`,
      };
    case "retry":
      return {
        upd: deliveryUpdate(`attempts = d.attempts + 1, last_response_code = p.code, last_error = p.error,
          next_attempt_at = now() + p.delay_ms * interval '1 millisecond'`),
        webhook: STREAK_INCREMENT,
      };
    case "exhausted":
      return {
        upd: deliveryUpdate(`status = 'FAILED', attempts = d.attempts + 1, last_response_code = p.code, last_error = p.error`),
        webhook: STREAK_UPDATE,
        stop: true,
      };
    case "gone":
      return {
        upd: deliveryUpdate(`status = 'FAILED', attempts = d.attempts + 1, last_response_code = p.code, last_error = p.error`),
        webhook: `UPDATE webhooks w SET failure_streak = w.failure_streak + 1, enabled = false,
            disabled_reason = CASE WHEN w.enabled THEN p.error ELSE w.disabled_reason END
          FROM upd, p WHERE w.id = upd.webhook_id
          RETURNING w.id, w.enabled, w.disabled_reason, w.deleted_at`,
        stop: true,
      };
    case "abandoned":
      return { upd: deliveryUpdate(`status = 'FAILED', last_error = p.error`), webhook: null };
    default:
      return assertNever(outcome);
  }
}

function errorOf(outcome: DeliveryOutcome): string | null {
  switch (outcome.kind) {
    case "delivered":
      return null;
    case "gone":
      return GONE_REASON;
    case "retry":
    case "exhausted":
    case "abandoned":
      return storableText(outcome.error.slice(0, MAX_STORED_ERROR));
    default:
      return assertNever(outcome);
  }
}

/**
 * Records the outcome of one claimed delivery and its effect on the webhook's
 * health in one statement. Returns false when the claim was no longer ours
 * (the lock ran out and another notifier took the delivery over): nothing is
 * written then, so a late outcome never overwrites a newer one.
 */
export async function recordDeliveryOutcome(
  db: Database,
  fence: DeliveryFence,
  outcome: DeliveryOutcome,
  disableAfter = WEBHOOK_DISABLE_AFTER_FAILURES,
): Promise<boolean> {
  const { upd, webhook, stop = false } = statementFor(outcome);
  const error = errorOf(outcome);
  const code = outcome.kind === "abandoned" ? null : outcome.responseCode;
  const streakReason = `disabled after ${disableAfter} consecutive failed delivery attempts (last: ${(error ?? "").slice(0, 300)})`;
  const res = await db.pool.query(
    `WITH p AS (SELECT $1::text AS delivery_id, $2::int AS held_attempts, $3::timestamptz AS held_lock, $4::int AS code,
       $5::text AS error, $6::int AS disable_after, $7::text AS streak_reason, $8::float8 AS delay_ms),
     upd AS (${upd})${webhook ? `, wh AS (${webhook})` : ""}${stop ? `, stopped AS (${STOP_WAITING})` : ""}
     SELECT count(*)::int AS n FROM upd`,
    [fence.id, fence.attempts, fence.lockedUntil, code, error, disableAfter, streakReason, outcome.kind === "retry" ? outcome.delayMs : 0],
  );
  return (res.rows[0]?.n ?? 0) > 0;
}
