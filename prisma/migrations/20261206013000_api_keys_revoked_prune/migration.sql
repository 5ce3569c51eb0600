-- Retention (pruneCredentials) deletes API keys revoked before its cutoff or
-- expired over a week ago. With no index on either column each pass read the
-- whole table, live keys and all, every RETENTION_PRUNE_INTERVAL_SECONDS.
-- Partial: only revoked keys are entries, a handful beside the live ones, and
-- creating or using a key writes none. With the next migration's index on
-- expires_at the prune's OR is a BitmapOr of the two
-- (test/integration/credential-retention-plan.test.ts).
-- CONCURRENTLY, in a migration of its own, so a big table keeps taking
-- writes while it is built (docs/operations.md, Upgrades and migrations).
CREATE INDEX CONCURRENTLY "api_keys_revoked_at_idx" ON "api_keys" ("revoked_at") WHERE "revoked_at" IS NOT NULL;
