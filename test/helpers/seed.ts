import { IdPrefix, generateSigningSecret, newId } from "@tasklane/core";
import type { Database, Queryable } from "@tasklane/db";

/**
 * Inserts a tenant and its default PULL queue directly (for tests of lower
 * layers that run without the gateway).
 */
export async function seedTenant(db: Database, opts: { weight?: number } = {}): Promise<{ tenantId: string; defaultQueueId: string }> {
  const tenantId = newId(IdPrefix.tenant);
  const defaultQueueId = newId(IdPrefix.queue);
  await db.pool.query("INSERT INTO tenants (id, name, signing_secret, weight) VALUES ($1, $2, $3, $4)", [
    tenantId,
    `tenant ${tenantId}`,
    generateSigningSecret(),
    opts.weight ?? 1,
  ]);
  await db.pool.query("INSERT INTO queues (id, tenant_id, name, mode) VALUES ($1, $2, 'default', 'PULL')", [defaultQueueId, tenantId]);
  return { tenantId, defaultQueueId };
}

export async function seedPushQueue(db: Database, tenantId: string, name: string, endpointUrl: string): Promise<string> {
  const id = newId(IdPrefix.queue);
  await db.pool.query("INSERT INTO queues (id, tenant_id, name, mode, endpoint_url) VALUES ($1, $2, $3, 'PUSH', $4)", [id, tenantId, name, endpointUrl]);
  return id;
}

/**
 * `count` finished tasks of `queueId` written straight into the table, two hours old: 90%
 * SUCCEEDED and 10% CANCELLED, types bulk-0 to bulk-6 in turn. For tests of reads over a big table.
 */
export async function seedFinishedTasks(pool: Queryable, tenantId: string, queueId: string, count: number): Promise<void> {
  for (let done = 0; done < count; done += 10_000) {
    const ids = Array.from({ length: Math.min(10_000, count - done) }, () => newId(IdPrefix.task));
    await pool.query(
      `INSERT INTO tasks (id, tenant_id, queue_id, type, status, run_at, created_at, completed_at, attempts, max_attempts,
                          backoff_strategy, backoff_delay_seconds, backoff_jitter, timeout_seconds)
       SELECT id, $2, $3, 'bulk-' || (ord % 7), CASE WHEN ord % 10 = 0 THEN 'CANCELLED'::"TaskStatus" ELSE 'SUCCEEDED'::"TaskStatus" END,
              now() - interval '2 hours', now() - interval '2 hours', now() - interval '2 hours', 1, 3, 'EXPONENTIAL', 1, true, 60
         FROM unnest($1::text[]) WITH ORDINALITY AS u(id, ord)`,
      [ids, tenantId, queueId],
    );
  }
}
