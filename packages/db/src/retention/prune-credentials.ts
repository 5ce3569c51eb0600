import type { Database } from "../database.js";
import { PRUNE_BATCH } from "./prune-finished.js";

/** Rows removed by one pass over credentials, by table. */
export interface PrunedCredentials {
  apiKeys: number;
  webhooks: number;
}

/**
 * How long an expired key (a console session key: createApiKey makes none that
 * expire) stays after its expiry, whatever TASK_RETENTION_DAYS: the keys page
 * shows recent sign-ins for a week. Each sign-in makes one, so they cannot
 * wait for a retention that may be "keep forever".
 */
export const EXPIRED_KEY_RETENTION_DAYS = 7;

/**
 * API keys past use: revoked before the retention's cutoff (apiKeys lists a
 * revoked key, with revokedAt, for TASK_RETENTION_DAYS), or expired more than
 * EXPIRED_KEY_RETENTION_DAYS ago. $1 is the retention in days, null to keep
 * revoked keys. Only the hash of a key is ever stored, and nothing references
 * a key row, so the row goes whole.
 */
const PRUNE_API_KEYS_SQL = `DELETE FROM api_keys k WHERE k.id IN (
    SELECT id FROM api_keys
    WHERE ($1::float8 IS NOT NULL AND revoked_at < now() - $1::float8 * interval '1 day')
       OR expires_at < now() - ${EXPIRED_KEY_RETENTION_DAYS} * interval '1 day'
    LIMIT $2 FOR UPDATE SKIP LOCKED)`;

/**
 * Webhook endpoints deleted before the cutoff whose delivery log is gone.
 * A deleted endpoint's row stays while any delivery names it, so
 * webhookDeliveries(webhookId) still answers for it (settled deliveries are
 * pruned at the same age; a pending one is abandoned at its next claim). Its
 * secret was already dropped at deletion (WebhookService.delete). Deleting
 * it earlier would set those deliveries' webhook_id to null (the foreign
 * key's ON DELETE SET NULL), and one still pending would then pass for a
 * task callback.
 */
const PRUNE_WEBHOOKS_SQL = `DELETE FROM webhooks w WHERE w.id IN (
    SELECT id FROM webhooks w2
    WHERE w2.deleted_at < now() - $1::float8 * interval '1 day'
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.webhook_id = w2.id)
    LIMIT $2 FOR UPDATE SKIP LOCKED)`;

/**
 * One bounded pass over spent credentials: at most `batch` API keys and
 * `batch` deleted webhooks, each in its own autocommit statement. With
 * `retentionDays` 0 (keep history) revoked keys and deleted webhooks stay,
 * but expired session keys still go. Callers repeat while `full` is true.
 */
export async function pruneCredentials(db: Database, retentionDays: number, batch = PRUNE_BATCH): Promise<{ pruned: PrunedCredentials; full: boolean }> {
  const keep = retentionDays === 0;
  const keys = await db.pool.query(PRUNE_API_KEYS_SQL, [keep ? null : retentionDays, batch]);
  const webhooks = keep ? null : await db.pool.query(PRUNE_WEBHOOKS_SQL, [retentionDays, batch]);
  const pruned: PrunedCredentials = { apiKeys: keys.rowCount ?? 0, webhooks: webhooks?.rowCount ?? 0 };
  return { pruned, full: pruned.apiKeys === batch || pruned.webhooks === batch };
}
