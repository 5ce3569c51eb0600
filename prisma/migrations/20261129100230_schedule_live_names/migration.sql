-- DropIndex
DROP INDEX "schedules_tenant_id_name_key";

-- CreateIndex
CREATE INDEX "schedules_tenant_id_name_idx" ON "schedules"("tenant_id", "name");

-- CreateIndex (partial: Prisma's schema cannot express it)
CREATE UNIQUE INDEX "schedules_tenant_id_name_live_key" ON "schedules"("tenant_id", "name") WHERE "deleted_at" IS NULL;
