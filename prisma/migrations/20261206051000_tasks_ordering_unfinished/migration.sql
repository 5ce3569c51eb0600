-- A terminal transition releases its ordering key's first waiting task
-- (packages/db/src/transitions/sql-fragments.ts, releaseNextInOrder),
-- including one redriven while a later task of the key ran, which is older
-- than the task that finished. Through (tenant_id, ordering_key, id) that look
-- read every finished task of the key kept for the retention period (23 ms
-- for a key with 50,000). This index holds only the key's unfinished tasks: a
-- task enters it when written and leaves it when it finishes. CONCURRENTLY,
-- in a migration of its own, so the table keeps taking writes while it is
-- built (docs/operations.md, Upgrades and migrations).
CREATE INDEX CONCURRENTLY "tasks_ordering_unfinished_idx" ON "tasks" ("tenant_id", "ordering_key", "id") WHERE "ordering_key" IS NOT NULL AND "status" IN ('SCHEDULED', 'BLOCKED', 'QUEUED', 'RUNNING', 'RETRYING');
