import { prepared, type Database } from "../database.js";

/** A delivery this process now holds until `lockedUntil`. */
export interface ClaimedDelivery {
  id: string;
  tenantId: string;
  /** Null for a task's callbackUrl delivery (webhooks are soft-deleted, so a null here is never a deleted webhook). */
  webhookId: string | null;
  /** The task the event is about; null for workflow events. */
  taskId: string | null;
  url: string;
  event: string;
  /** The exact bytes to sign and send: stored once at fan-out, identical on every attempt. */
  body: string;
  /** Attempts recorded before this one. */
  attempts: number;
  /** The fence: every outcome update names it, so a claim that expired and was retaken elsewhere cannot be overwritten. */
  lockedUntil: Date;
  /** Signing secrets, current first: the webhook's own, or the tenant's (plus the previous one during a rotation's grace period). */
  secrets: string[];
  /** Why this delivery must not be sent at all (its webhook was disabled or deleted since fan-out), else null. */
  blockedReason: string | null;
  /** The W3C traceparent of the delivery's task, if it has one: the delivery span's parent, sent as a header. */
  traceParent: string | null;
}

export interface ClaimOptions {
  /** Most deliveries to claim: the caller's free slots, so nothing claimed waits in memory while its lock runs out. */
  limit: number;
  /** Lock length: the request timeout plus a margin for recording the outcome. */
  lockMs: number;
  /** Most deliveries in flight per endpoint URL in this process. */
  perEndpointLimit: number;
  /** What this process already has in flight per URL; those count against perEndpointLimit. */
  inFlightByUrl: ReadonlyMap<string, number>;
}

/**
 * Due rows examined per claim before the per-endpoint cap is applied. A bound
 * keeps the window function cheap under a huge backlog; a slow endpoint with
 * thousands of due rows can then crowd others out of one scan, but failed
 * attempts move past the window (next_attempt_at) and successful ones drain.
 */
const SCAN_FACTOR = 10;
const MIN_SCAN = 1000;

type Row = {
  id: string;
  tenant_id: string;
  webhook_id: string | null;
  task_id: string | null;
  url: string;
  event: string;
  body: string;
  attempts: number;
  locked_until: Date;
  webhook_secret: string | null;
  webhook_enabled: boolean | null;
  webhook_deleted: boolean | null;
  disabled_reason: string | null;
  signing_secret: string;
  previous_secret: string | null;
  trace_parent: string | null;
};

/**
 * Claims due PENDING deliveries: next_attempt_at reached and no live lock
 * (a lock left by a killed notifier runs out and the delivery comes back).
 * Rows are picked with SKIP LOCKED, so notifiers never wait on each other,
 * oldest first, at most `perEndpointLimit` minus what is already in flight per
 * URL, so one slow receiver cannot take every slot.
 */
export async function claimDueDeliveries(db: Database, options: ClaimOptions): Promise<ClaimedDelivery[]> {
  if (options.limit <= 0) return [];
  const busy = [...options.inFlightByUrl.entries()];
  // Prepared: polled ten times a second, the statement was parsed and planned on every poll.
  const res = await db.pool.query<Row>(
    prepared(
      `WITH busy AS (SELECT * FROM unnest($4::text[], $5::int[]) AS b(url, n)),
     cand AS (
       SELECT c.id FROM (
         SELECT s.id, s.url, s.next_attempt_at,
           row_number() OVER (PARTITION BY s.url ORDER BY s.next_attempt_at, s.id) AS rn
         FROM (SELECT id, url, next_attempt_at FROM webhook_deliveries
               WHERE status = 'PENDING' AND next_attempt_at <= now() AND (locked_until IS NULL OR locked_until < now())
               ORDER BY next_attempt_at LIMIT $6) s
       ) c LEFT JOIN busy b ON b.url = c.url
       WHERE c.rn <= $3 - COALESCE(b.n, 0)
       ORDER BY c.next_attempt_at, c.id LIMIT $1
     ),
     locked AS (
       SELECT d.id, d.tenant_id, d.webhook_id FROM webhook_deliveries d
       WHERE d.id IN (SELECT id FROM cand) AND d.status = 'PENDING' AND (d.locked_until IS NULL OR d.locked_until < now())
       FOR UPDATE SKIP LOCKED
     )
     UPDATE webhook_deliveries d SET locked_until = now() + $2 * interval '1 millisecond'
     FROM locked l JOIN tenants t ON t.id = l.tenant_id LEFT JOIN webhooks w ON w.id = l.webhook_id
     WHERE d.id = l.id
     RETURNING d.id, d.tenant_id, d.webhook_id, d.task_id, d.url, d.event, d.body, d.attempts, d.locked_until,
       w.secret AS webhook_secret, w.enabled AS webhook_enabled, (w.deleted_at IS NOT NULL) AS webhook_deleted,
       w.disabled_reason, t.signing_secret,
       CASE WHEN t.previous_secret_expires_at > now() THEN t.previous_signing_secret END AS previous_secret,
       (SELECT tk.trace_parent FROM tasks tk WHERE tk.id = d.task_id) AS trace_parent`,
      [
        options.limit,
        options.lockMs,
        options.perEndpointLimit,
        busy.map(([url]) => url),
        busy.map(([, n]) => n),
        Math.max(options.limit * SCAN_FACTOR, MIN_SCAN),
      ],
    ),
  );
  return res.rows.map(mapClaimed);
}

function mapClaimed(r: Row): ClaimedDelivery {
  const isWebhook = r.webhook_id !== null;
  const secrets = isWebhook
    ? r.webhook_secret === null ? [] : [r.webhook_secret]
    : r.previous_secret === null ? [r.signing_secret] : [r.signing_secret, r.previous_secret];
  return {
    id: r.id,
    tenantId: r.tenant_id,
    webhookId: r.webhook_id,
    taskId: r.task_id,
    url: r.url,
    event: r.event,
    body: r.body,
    attempts: r.attempts,
    lockedUntil: r.locked_until,
    secrets,
    blockedReason: isWebhook ? blockedReason(r) : null,
    traceParent: r.trace_parent,
  };
}

function blockedReason(r: Row): string | null {
  if (r.webhook_secret === null || r.webhook_deleted === true) return "webhook was deleted";
  if (r.webhook_enabled === false) return `webhook is disabled${r.disabled_reason ? `: ${r.disabled_reason}` : ""}`;
  return null;
}
