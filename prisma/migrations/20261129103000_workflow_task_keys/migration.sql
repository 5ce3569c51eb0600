-- DropIndex (the unique index below leads with workflow_id and serves its lookups)
DROP INDEX "tasks_workflow_id_idx";

-- CreateIndex
CREATE UNIQUE INDEX "tasks_workflow_id_workflow_key_key" ON "tasks"("workflow_id", "workflow_key");

-- CreateIndex (partial: Prisma's schema cannot express it)
-- "Is any task of this workflow unfinished?" is asked after every terminal
-- transition of a workflow task; with this index it is one index probe, not a
-- scan of the workflow's finished tasks (a 1,000-task chain would otherwise
-- read ~500k rows in all). Non-workflow tasks never enter it.
CREATE INDEX "tasks_workflow_unfinished_idx" ON "tasks"("workflow_id")
  WHERE "workflow_id" IS NOT NULL AND "status" IN ('SCHEDULED', 'BLOCKED', 'QUEUED', 'RUNNING', 'RETRYING');
