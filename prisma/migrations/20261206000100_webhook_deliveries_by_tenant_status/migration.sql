-- webhookDeliveries(status:, before:) pages a tenant's deliveries of one
-- status newest first (created_at, id). On (tenant_id, created_at) alone a
-- rare status read every row of the tenant to find none: 35 ms per 90,000
-- rows under EXPLAIN ANALYZE, growing with the log; here 0.1-2 ms, every page.
-- CONCURRENTLY, in a migration of its own, so a big table keeps taking
-- writes while it is built (docs/operations.md, Upgrades and migrations).
CREATE INDEX CONCURRENTLY "webhook_deliveries_tenant_status_created_idx" ON "webhook_deliveries" ("tenant_id", "status", "created_at" DESC, "id" DESC);
