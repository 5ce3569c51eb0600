import { IdPrefix, generateSigningSecret, newId } from "@tasklane/core";
import type { Database } from "@tasklane/db";

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
