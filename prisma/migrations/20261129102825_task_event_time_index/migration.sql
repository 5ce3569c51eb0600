-- CreateIndex
CREATE INDEX "task_events_tenant_id_at_idx" ON "task_events"("tenant_id", "at");
