-- Every status change of a task writes a new entry into each of its indexes
-- (status is indexed, so no update is HOT): three writes per task on the hot
-- path (submit, start, finish). Indexes over optional columns only need the
-- rows that have the column set, and the lease-expiry index only RUNNING rows,
-- so a plain task now skips six index insertions on each of those writes.
-- Their queries all name the column with an equality (or status = 'RUNNING'),
-- which lets the planner prove the partial predicate. ON CONFLICT DO NOTHING
-- in submit-tasks has no arbiter, so it still honours the partial uniques.

DROP INDEX "tasks_tenant_id_idempotency_key_key";
CREATE UNIQUE INDEX "tasks_tenant_id_idempotency_key_key" ON "tasks"("tenant_id", "idempotency_key")
  WHERE "idempotency_key" IS NOT NULL;

DROP INDEX "tasks_occurrence_key_key";
CREATE UNIQUE INDEX "tasks_occurrence_key_key" ON "tasks"("occurrence_key")
  WHERE "occurrence_key" IS NOT NULL;

DROP INDEX "tasks_workflow_id_workflow_key_key";
CREATE UNIQUE INDEX "tasks_workflow_id_workflow_key_key" ON "tasks"("workflow_id", "workflow_key")
  WHERE "workflow_id" IS NOT NULL;

DROP INDEX "tasks_schedule_id_run_at_idx";
CREATE INDEX "tasks_schedule_id_run_at_idx" ON "tasks"("schedule_id", "run_at" DESC)
  WHERE "schedule_id" IS NOT NULL;

DROP INDEX "tasks_tenant_id_ordering_key_id_idx";
CREATE INDEX "tasks_tenant_id_ordering_key_id_idx" ON "tasks"("tenant_id", "ordering_key", "id")
  WHERE "ordering_key" IS NOT NULL;

DROP INDEX "tasks_status_lease_expires_at_idx";
CREATE INDEX "tasks_lease_expires_at_running_idx" ON "tasks"("lease_expires_at")
  WHERE "status" = 'RUNNING';
