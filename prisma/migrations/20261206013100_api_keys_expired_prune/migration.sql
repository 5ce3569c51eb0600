-- The other half of the prune's OR (see the previous migration): keys that
-- expire (console session keys, one per sign-in); createApiKey's keys never
-- do and are not entries.
-- CONCURRENTLY, in a migration of its own (see the previous migration).
CREATE INDEX CONCURRENTLY "api_keys_expires_at_idx" ON "api_keys" ("expires_at") WHERE "expires_at" IS NOT NULL;
