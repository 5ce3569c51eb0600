-- The notifier's claim reads a tenant's due deliveries origin by origin: it
-- walks the tenant's distinct origins with PENDING rows one index descent
-- each (a loose index scan) and reads the oldest due rows only of the origins
-- below their cap, so a backlog behind a full origin (a receiver that hangs)
-- costs one descent, not a read of its rows. Partial: delivered and failed
-- rows, most of the table, take no entry. CONCURRENTLY, in a migration of its
-- own, so a big table keeps taking writes while it is built
-- (docs/operations.md, Upgrades and migrations).
CREATE INDEX CONCURRENTLY "webhook_deliveries_due_by_origin_idx" ON "webhook_deliveries" ("tenant_id", "origin", "next_attempt_at", "id") WHERE status = 'PENDING';
