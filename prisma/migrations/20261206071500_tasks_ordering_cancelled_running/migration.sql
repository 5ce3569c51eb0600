-- A waiting task of an ordering key may not start while an earlier task of its
-- key, cancelled while it ran on a PULL queue, may still be running in its
-- worker (packages/db/src/transitions/start-attempts.ts, dueAndUnblocked).
-- Through (tenant_id, ordering_key, id) that look read every finished task of
-- the key kept for the retention period, on every start of the key's tasks (a
-- key with 50,000 finished tasks: 50,000 rows per start). This index holds only
-- ordered tasks cancelled while they ran, the rows the look is about.
-- CONCURRENTLY, in a migration of its own, so the table keeps taking writes
-- while it is built (docs/operations.md, Upgrades and migrations).
CREATE INDEX CONCURRENTLY "tasks_ordering_cancelled_running_idx" ON "tasks" ("tenant_id", "ordering_key", "id") WHERE "ordering_key" IS NOT NULL AND "status" = 'CANCELLED' AND "cancel_requested";
