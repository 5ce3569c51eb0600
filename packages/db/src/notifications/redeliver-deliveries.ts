import type { Database } from "../database.js";
import { OUTBOX_WAKEUPS, REDELIVERY_WAKEUP } from "./listen-wakeups.js";

/**
 * Most deliveries one redeliverWebhookDeliveries call puts back: the oldest
 * this many FAILED ones since the time given. Those are PENDING afterwards,
 * so the caller calls again with the same `since` for the rest (an answer
 * below this means none were left). One call of 10,000 is ten statements of
 * REDELIVERY_BATCH.
 * @defaultValue 10000
 */
export const MAX_REDELIVERIES_PER_CALL = 10_000;

/** Rows one statement of a bulk redelivery updates: short statements, so the notifier's claims never wait long on them. */
export const REDELIVERY_BATCH = 1_000;

/**
 * What a delivery looked like when a single redelivery was asked for, and
 * whether the conditional update took it. `found` false: no such delivery for
 * this tenant (another tenant's id is the same answer).
 */
export type SingleRedelivery =
  | { kind: "redelivered"; delivery: RedeliveredDelivery }
  | { kind: "not_found" }
  | { kind: "in_flight"; status: string }
  | { kind: "webhook_deleted" }
  | { kind: "webhook_disabled"; reason: string | null }
  | { kind: "url_changed" };

/**
 * A delivery as its redelivery left it (every column but the body): the
 * answer. Read back afterwards it could already show the new round's first
 * attempt, or DELIVERED: the commit wakes the notifiers at once.
 */
export interface RedeliveredDelivery {
  id: string;
  tenantId: string;
  webhookId: string | null;
  event: string;
  taskId: string | null;
  status: "PENDING";
  attempts: number;
  lastResponseCode: number | null;
  lastError: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
  nextAttemptAt: Date;
}

/** Back to PENDING, due now, for a fresh round of the retry schedule; attempts, last outcome and deliveredAt stay as history. */
const BACK_TO_PENDING = `status = 'PENDING', next_attempt_at = now(), locked_until = NULL, round_start_attempts = d.attempts`;

/**
 * A select-list item that, when the statement's `upd` put any row back, wakes the notifiers' delivery
 * loops at its commit (the LISTEN session they already hold for the fan-out): without it a redelivery
 * waited for their next poll (NOTIFIER_DELIVERY_POLL_MS, 1 s). In the statement, so it is sent with the
 * commit that made the rows due and never without it.
 */
const WAKE_NOTIFIERS = `(SELECT pg_notify('${OUTBOX_WAKEUPS.name}', '${REDELIVERY_WAKEUP}') WHERE EXISTS (SELECT 1 FROM upd)) AS woke`;

/**
 * A finished delivery (FAILED, abandoned included, or DELIVERED) back to
 * PENDING, in one statement: the status is checked in the UPDATE's WHERE, so
 * it cannot interleave with a notifier's claim (which takes PENDING rows
 * only) or outcome (which requires PENDING and its own lock). The webhook
 * must be live and enabled at that moment (a disabled one would only be
 * abandoned again), and the URL the caller checked still the row's. `before`
 * is the row as it was, so a refusal can say why; `upd` the row as it left it.
 */
const REDELIVER_ONE = `
  WITH before AS (
    SELECT d.id, d.status, d.webhook_id, d.url, w.enabled AS webhook_enabled, (w.deleted_at IS NOT NULL) AS webhook_deleted,
      w.disabled_reason
    FROM webhook_deliveries d LEFT JOIN webhooks w ON w.id = d.webhook_id
    WHERE d.id = $1 AND d.tenant_id = $2
  ), upd AS (
    UPDATE webhook_deliveries d SET ${BACK_TO_PENDING}
    WHERE d.id = $1 AND d.tenant_id = $2 AND d.status IN ('FAILED', 'DELIVERED') AND d.url = $3
      AND (d.webhook_id IS NULL OR EXISTS (
        SELECT 1 FROM webhooks w WHERE w.id = d.webhook_id AND w.enabled AND w.deleted_at IS NULL))
    RETURNING d.id, d.tenant_id AS "tenantId", d.webhook_id AS "webhookId", d.event, d.task_id AS "taskId", d.attempts,
      d.last_response_code AS "lastResponseCode", d.last_error AS "lastError", d.created_at AS "createdAt",
      d.delivered_at AS "deliveredAt", d.next_attempt_at AS "nextAttemptAt"
  )
  SELECT b.*, u.id AS redelivered, u."tenantId", u."webhookId", u.event, u."taskId", u.attempts, u."lastResponseCode",
    u."lastError", u."createdAt", u."deliveredAt", u."nextAttemptAt", ${WAKE_NOTIFIERS}
  FROM before b LEFT JOIN upd u ON true`;

/** `before`'s columns; then, when the update took the row, the delivery as it left it (null otherwise). */
interface RedeliverOneRow extends Nullable<Omit<RedeliveredDelivery, "id" | "status">> {
  id: string;
  status: string;
  webhook_id: string | null;
  url: string;
  webhook_enabled: boolean | null;
  webhook_deleted: boolean | null;
  disabled_reason: string | null;
  redelivered: string | null;
}

type Nullable<T> = { [K in keyof T]: T[K] | null };

/** The delivery's URL as stored, for the caller's outbound-URL check before redelivering; null when absent or another tenant's. */
export async function deliveryUrl(db: Database, tenantId: string, id: string): Promise<string | null> {
  const res = await db.pool.query<{ url: string }>("SELECT url FROM webhook_deliveries WHERE id = $1 AND tenant_id = $2", [id, tenantId]);
  return res.rows[0]?.url ?? null;
}

/** See REDELIVER_ONE. `checkedUrl`: the URL the caller judged still allowed; a row re-addressed since is `url_changed`. */
export async function redeliverDelivery(db: Database, tenantId: string, id: string, checkedUrl: string): Promise<SingleRedelivery> {
  const res = await db.pool.query<RedeliverOneRow>(REDELIVER_ONE, [id, tenantId, checkedUrl]);
  const row = res.rows[0];
  if (row === undefined) return { kind: "not_found" };
  if (row.redelivered !== null) {
    const { tenantId, webhookId, event, taskId, attempts, lastResponseCode, lastError, createdAt, deliveredAt, nextAttemptAt } = row;
    if (tenantId === null || event === null || attempts === null || createdAt === null || nextAttemptAt === null) throw new Error(`redelivery of ${id} answered an incomplete row`);
    return {
      kind: "redelivered",
      delivery: { id: row.redelivered, tenantId, webhookId, event, taskId, status: "PENDING", attempts, lastResponseCode, lastError, createdAt, deliveredAt, nextAttemptAt },
    };
  }
  if (row.status === "PENDING") return { kind: "in_flight", status: row.status };
  if (row.webhook_id !== null && row.webhook_deleted !== false) return { kind: "webhook_deleted" };
  if (row.webhook_id !== null && row.webhook_enabled === false) return { kind: "webhook_disabled", reason: row.disabled_reason };
  if (row.url !== checkedUrl) return { kind: "url_changed" };
  // The row changed between the statement's snapshot and its update (a concurrent redelivery took it): PENDING now.
  return { kind: "in_flight", status: "PENDING" };
}

/** One recover statement: rows put back, and the last row it picked (the next statement starts after it). */
interface RecoverRow {
  n: number;
  last_created_at: Date | null;
  last_id: string | null;
}

/**
 * Svix's "recover": the webhook's FAILED deliveries created at or after
 * `since` back to PENDING (see BACK_TO_PENDING), oldest first, at most
 * `max` (MAX_REDELIVERIES_PER_CALL), REDELIVERY_BATCH rows a statement. Each
 * statement requires the webhook to be live and enabled and each row to be
 * FAILED at that moment, so a row a notifier holds (PENDING) is never
 * touched and a webhook disabled meanwhile stops it. Returns how many went back.
 */
export async function redeliverFailedSince(
  db: Database,
  tenantId: string,
  webhookId: string,
  since: Date,
  max = MAX_REDELIVERIES_PER_CALL,
): Promise<number> {
  let total = 0;
  // Keyset over (created_at, id): each row is looked at once per call, even one that fails again while the call runs.
  let after: { createdAt: Date; id: string } | null = null;
  while (total < max) {
    const batch = Math.min(REDELIVERY_BATCH, max - total);
    const res: { rows: RecoverRow[] } = await db.pool.query<RecoverRow>(
      `WITH picked AS (
         SELECT c.id, c.created_at FROM webhook_deliveries c
         WHERE c.webhook_id = $1 AND c.tenant_id = $2 AND c.status = 'FAILED' AND c.created_at >= $3
           AND ($5::timestamptz IS NULL OR (c.created_at, c.id) > ($5::timestamptz, $6::text))
         ORDER BY c.created_at, c.id LIMIT $4
         FOR UPDATE SKIP LOCKED
       ), upd AS (
         UPDATE webhook_deliveries d SET ${BACK_TO_PENDING}
         FROM picked WHERE d.id = picked.id AND d.tenant_id = $2 AND d.status = 'FAILED'
           AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = $1 AND w.tenant_id = $2 AND w.enabled AND w.deleted_at IS NULL)
         RETURNING d.id
       ), last AS (SELECT created_at, id FROM picked ORDER BY created_at DESC, id DESC LIMIT 1)
       SELECT (SELECT count(*)::int FROM upd) AS n,
         (SELECT created_at FROM last) AS last_created_at, (SELECT id FROM last) AS last_id, ${WAKE_NOTIFIERS}`,
      [webhookId, tenantId, since, batch, after?.createdAt ?? null, after?.id ?? null],
    );
    const row: RecoverRow | undefined = res.rows[0];
    total += row?.n ?? 0;
    if (row === undefined || row.n < batch || row.last_created_at === null || row.last_id === null) break;
    after = { createdAt: row.last_created_at, id: row.last_id };
  }
  return total;
}
