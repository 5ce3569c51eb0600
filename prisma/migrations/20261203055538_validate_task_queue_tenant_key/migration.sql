-- Checks the existing tasks against the key the previous migration added (see
-- task_queue_tenant_key); a separate transaction, so that only this scan's
-- SHARE UPDATE EXCLUSIVE lock is held while it runs and submissions go on.
ALTER TABLE "tasks" VALIDATE CONSTRAINT "tasks_tenant_id_queue_id_fkey";
