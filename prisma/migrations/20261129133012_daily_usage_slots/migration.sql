-- AlterTable
ALTER TABLE "tenant_daily_usage" DROP CONSTRAINT "tenant_daily_usage_pkey",
ADD COLUMN     "slot" INTEGER NOT NULL DEFAULT 0,
ADD CONSTRAINT "tenant_daily_usage_pkey" PRIMARY KEY ("tenant_id", "day", "slot");
