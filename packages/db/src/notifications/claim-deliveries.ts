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
  /** The URL's scheme, host and port as the per-origin cap counts them: the row's origin column (SQL tasklane_url_origin). */
  origin: string;
  event: string;
  /** The exact bytes to sign and send: stored once at fan-out, identical on every attempt. */
  body: string;
  /** Attempts recorded before this one. */
  attempts: number;
  /** Attempts recorded before this one in the current round (since the last redelivery): what the retry schedule counts. */
  roundAttempts: number;
  /** The fence: every outcome update names it, so a claim that expired and was retaken elsewhere cannot be overwritten. */
  lockedUntil: Date;
  /** Signing secrets, current first: the webhook's own or the tenant's, each plus the one it replaced during a rotation's grace period. */
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
  /** Most deliveries in flight per tenant and receiver origin (scheme, host and port) in this process. */
  perOriginLimit: number;
  /**
   * Most deliveries one tenant may have in flight in this process while
   * another tenant has due work this claim could start; a tenant alone may
   * use every slot.
   */
  tenantShare: number;
  /**
   * `tenantShare` holds even for a tenant alone with due work. The delivery
   * loop sets it when every slot is held and only tenants under the share
   * they are owed may start (on slots lent past NOTIFIER_CONCURRENCY).
   * @defaultValue false
   */
  shareAlone?: boolean;
  /** What this process already has in flight, per tenant and origin and per tenant; those count against the caps. */
  inFlight: InFlightCounts;
  /**
   * Where the walk over tenants with PENDING deliveries starts: after this
   * tenant id ("" for the first), wrapping round; the previous claim's
   * `walkedTo`, so successive claims take the tenants in turn.
   */
  afterTenant: string;
  /** Most tenants one claim walks. */
  walkLimit: number;
}

/** What one claim took, and how far its walk over tenants went. */
export interface ClaimResult {
  deliveries: ClaimedDelivery[];
  /** The last tenant walked: the next claim's `afterTenant` ("" when no tenant has PENDING deliveries). */
  walkedTo: string;
  /** The walk stopped at `walkLimit`: tenants past `walkedTo` were not looked at. */
  truncated: boolean;
}

/** A process's deliveries in flight, as the claim counts them. */
export interface InFlightCounts {
  /** Keyed by originKey(tenantId, origin). */
  byOrigin: ReadonlyMap<string, number>;
  byTenant: ReadonlyMap<string, number>;
}

/** The key of InFlightCounts.byOrigin: a tenant's deliveries to one origin. */
export function originKey(tenantId: string, origin: string): string {
  return `${tenantId} ${origin}`;
}

/**
 * Distinct origins of one tenant with PENDING deliveries looked at per claim,
 * in origin order: each costs one index descent, plus a read of its oldest
 * due rows when it is below its cap. A tenant with more receiver origins than
 * this waiting at once has only the first ones (by name) looked at until some
 * of them have nothing PENDING left. Rows without an origin (PENDING since
 * before the column, until fillDeliveryOrigins reaches them) are passed over.
 */
const PER_TENANT_ORIGINS = 256;

type Row = {
  walked: number;
  walked_to: string | null;
  /** Null on the one row that only carries the walk's extent, when nothing was claimed. */
  id: string | null;
  tenant_id: string;
  webhook_id: string | null;
  task_id: string | null;
  url: string;
  origin: string;
  event: string;
  body: string;
  attempts: number;
  round_attempts: number;
  locked_until: Date;
  webhook_secret: string | null;
  webhook_previous_secret: string | null;
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
 * Rows are picked with SKIP LOCKED, so notifiers never wait on each other.
 *
 * Fair across tenants, as Svix and Hatchet isolate their tenants:
 * - every tenant with due work is looked at, however deep another tenant's
 *   backlog: the tenants with PENDING rows are walked one index descent each
 *   (a loose index scan on webhook_deliveries_due_by_tenant_idx, whose first
 *   entry per tenant is its earliest next_attempt_at). The walk costs ~5 µs
 *   per tenant with PENDING rows, due or waiting for a retry (3.5 ms with 4
 *   such tenants and 100,000 rows of one, ~25-35 ms with 5,000), so it takes
 *   at most `walkLimit` tenants,
 *   from `afterTenant` round: past that many, successive claims take them in
 *   turn;
 * - per tenant and receiver origin at most `perOriginLimit` in flight in this
 *   process (callbacks included), so URLs differing by path or query string
 *   share one cap. Each tenant with due work has its distinct origins walked
 *   one descent each (webhook_deliveries_due_by_origin_idx, at most
 *   PER_TENANT_ORIGINS), and only the origins below their cap have their
 *   oldest due rows read, as many as the cap leaves: a full origin is skipped
 *   whole, however deep its backlog (a receiver that hangs), so the tenant's
 *   other endpoints go on (as Svix and Stripe keep a slow endpoint from
 *   delaying the others); the claim reads rows in proportion to the origins
 *   and what it can start, not to any backlog;
 * - while two or more tenants have work this claim could start, none goes
 *   past `tenantShare` in flight; alone, a tenant may take every free slot
 *   (unless `shareAlone`);
 * - the free slots go round-robin, least loaded tenant first: a tenant's
 *   n-th row ranks by its in-flight count + n, then by due time.
 */
export async function claimDueDeliveries(db: Database, options: ClaimOptions): Promise<ClaimResult> {
  if (options.limit <= 0) return { deliveries: [], walkedTo: options.afterTenant, truncated: false };
  const origins = [...options.inFlight.byOrigin.entries()];
  const tenants = [...options.inFlight.byTenant.entries()];
  // Prepared: claimed whenever a slot frees up, the statement was parsed and planned on every call.
  const res = await db.pool.query<Row>(
    prepared(
      `WITH RECURSIVE walk AS (
       (SELECT tenant_id, next_attempt_at AS first_due, 1 AS n FROM webhook_deliveries
        WHERE status = 'PENDING' AND tenant_id > $10 ORDER BY tenant_id, next_attempt_at LIMIT 1)
       UNION ALL
       SELECT x.tenant_id, x.first_due, w.n + 1 FROM walk w CROSS JOIN LATERAL (
         SELECT d.tenant_id, d.next_attempt_at AS first_due FROM webhook_deliveries d
         WHERE d.status = 'PENDING' AND d.tenant_id > w.tenant_id ORDER BY d.tenant_id, d.next_attempt_at LIMIT 1
       ) x WHERE w.n < $11
     ),
     wrap AS (
       (SELECT tenant_id, next_attempt_at AS first_due, (SELECT count(*) FROM walk) + 1 AS n FROM webhook_deliveries
        WHERE status = 'PENDING' AND tenant_id <= $10 AND (SELECT count(*) FROM walk) < $11
        ORDER BY tenant_id, next_attempt_at LIMIT 1)
       UNION ALL
       SELECT x.tenant_id, x.first_due, w.n + 1 FROM wrap w CROSS JOIN LATERAL (
         SELECT d.tenant_id, d.next_attempt_at AS first_due FROM webhook_deliveries d
         WHERE d.status = 'PENDING' AND d.tenant_id > w.tenant_id AND d.tenant_id <= $10
         ORDER BY d.tenant_id, d.next_attempt_at LIMIT 1
       ) x WHERE w.n < $11
     ),
     pending_tenants AS (SELECT * FROM walk UNION ALL SELECT * FROM wrap),
     busy_origin AS (SELECT * FROM unnest($4::text[], $5::int[]) AS b(key, n)),
     busy_tenant AS (SELECT * FROM unnest($6::text[], $7::int[]) AS b(tenant_id, n)),
     -- The distinct origins of each tenant with due work, one descent each of
     -- webhook_deliveries_due_by_origin_idx (a loose index scan): a full origin's backlog is never read.
     tenant_origin AS (
       SELECT p.tenant_id, o.origin, 1 AS k FROM pending_tenants p CROSS JOIN LATERAL (
         SELECT w.origin FROM webhook_deliveries w
         WHERE w.tenant_id = p.tenant_id AND w.status = 'PENDING' AND w.origin IS NOT NULL ORDER BY w.origin LIMIT 1
       ) o WHERE p.first_due <= now()
       UNION ALL
       SELECT t.tenant_id, o.origin, t.k + 1 FROM tenant_origin t CROSS JOIN LATERAL (
         SELECT w.origin FROM webhook_deliveries w
         WHERE w.tenant_id = t.tenant_id AND w.status = 'PENDING' AND w.origin > t.origin ORDER BY w.origin LIMIT 1
       ) o WHERE t.k < $8
     ),
     -- Per origin, its oldest due rows up to what its cap leaves: none read at all for a full one (LIMIT 0).
     due AS (
       SELECT r.id, t.tenant_id, r.next_attempt_at
       FROM tenant_origin t LEFT JOIN busy_origin bo ON bo.key = t.tenant_id || ' ' || t.origin
       CROSS JOIN LATERAL (
         SELECT w.id, w.next_attempt_at FROM webhook_deliveries w
         WHERE w.tenant_id = t.tenant_id AND w.origin = t.origin AND w.status = 'PENDING' AND w.next_attempt_at <= now()
           AND (w.locked_until IS NULL OR w.locked_until < now())
         ORDER BY w.next_attempt_at, w.id LIMIT GREATEST($3 - COALESCE(bo.n, 0), 0)
       ) r
     ),
     fit AS (
       SELECT u.id, u.tenant_id, u.next_attempt_at,
         row_number() OVER (PARTITION BY u.tenant_id ORDER BY u.next_attempt_at, u.id) AS tenant_rn
       FROM due u
     ),
     cand AS (
       SELECT f.id FROM fit f LEFT JOIN busy_tenant bt ON bt.tenant_id = f.tenant_id
       WHERE (NOT $12::boolean AND (SELECT count(DISTINCT tenant_id) FROM fit) < 2) OR f.tenant_rn <= $9 - COALESCE(bt.n, 0)
       ORDER BY COALESCE(bt.n, 0) + f.tenant_rn, f.next_attempt_at, f.id LIMIT $1
     ),
     locked AS (
       SELECT d.id, d.tenant_id, d.webhook_id FROM webhook_deliveries d
       WHERE d.id IN (SELECT id FROM cand) AND d.status = 'PENDING' AND (d.locked_until IS NULL OR d.locked_until < now())
       FOR UPDATE SKIP LOCKED
     ),
     claimed AS (
       UPDATE webhook_deliveries d SET locked_until = now() + $2 * interval '1 millisecond'
       FROM locked l JOIN tenants t ON t.id = l.tenant_id LEFT JOIN webhooks w ON w.id = l.webhook_id
       WHERE d.id = l.id
       RETURNING d.id, d.tenant_id, d.webhook_id, d.task_id, d.url, d.origin, d.event, d.body, d.attempts,
         d.attempts - d.round_start_attempts AS round_attempts, d.locked_until,
         w.secret AS webhook_secret,
         CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret END AS webhook_previous_secret,
         w.enabled AS webhook_enabled, (w.deleted_at IS NOT NULL) AS webhook_deleted,
         w.disabled_reason, t.signing_secret,
         CASE WHEN t.previous_secret_expires_at > now() THEN t.previous_signing_secret END AS previous_secret,
         (SELECT tk.trace_parent FROM tasks tk WHERE tk.id = d.task_id) AS trace_parent
     )
     SELECT m.walked, m.walked_to, c.* FROM (
       SELECT count(*)::int AS walked, (SELECT tenant_id FROM pending_tenants ORDER BY n DESC LIMIT 1) AS walked_to FROM pending_tenants
     ) m LEFT JOIN claimed c ON true`,
      [
        options.limit,
        options.lockMs,
        options.perOriginLimit,
        origins.map(([key]) => key),
        origins.map(([, n]) => n),
        tenants.map(([tenantId]) => tenantId),
        tenants.map(([, n]) => n),
        PER_TENANT_ORIGINS,
        options.tenantShare,
        options.afterTenant,
        options.walkLimit,
        options.shareAlone ?? false,
      ],
    ),
  );
  const extent = res.rows[0];
  return {
    deliveries: res.rows.filter((r): r is Row & { id: string } => r.id !== null).map(mapClaimed),
    walkedTo: extent?.walked_to ?? "",
    truncated: (extent?.walked ?? 0) >= options.walkLimit,
  };
}

function mapClaimed(r: Row & { id: string }): ClaimedDelivery {
  const isWebhook = r.webhook_id !== null;
  const secrets = isWebhook
    ? r.webhook_secret === null ? [] : r.webhook_previous_secret === null ? [r.webhook_secret] : [r.webhook_secret, r.webhook_previous_secret]
    : r.previous_secret === null ? [r.signing_secret] : [r.signing_secret, r.previous_secret];
  return {
    id: r.id,
    tenantId: r.tenant_id,
    webhookId: r.webhook_id,
    taskId: r.task_id,
    url: r.url,
    origin: r.origin,
    event: r.event,
    body: r.body,
    attempts: r.attempts,
    roundAttempts: r.round_attempts,
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
