-- Queue tables churn: every task is inserted, updated several times and its
-- outbox row deleted. Dead tuples slow claims sharply (a run after mass
-- deletes without VACUUM fell ~10x), so vacuum these far more eagerly than
-- Postgres's defaults (20% dead rows) would.
ALTER TABLE "outbox" SET (autovacuum_vacuum_scale_factor = 0.0, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_limit = 2000);
ALTER TABLE "tasks" SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02, fillfactor = 80);
ALTER TABLE "webhook_deliveries" SET (autovacuum_vacuum_scale_factor = 0.02);
