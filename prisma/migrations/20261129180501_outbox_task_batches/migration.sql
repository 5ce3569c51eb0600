-- AlterTable
ALTER TABLE "outbox" ADD COLUMN     "task_ids" TEXT[];
