-- AlterTable
ALTER TABLE "tasks" ADD COLUMN     "trace_parent" TEXT;
