-- leaseTasks reads each priority lane of a PULL queue in (run_at, id) order
-- and stops after the batch it needs (start-attempts.ts). Only waiting tasks
-- are in it: a task enters once when written and leaves when it starts.
CREATE INDEX "tasks_runnable_lane_idx" ON "tasks"("queue_id", "priority", "run_at", "id")
  WHERE "status" IN ('QUEUED', 'SCHEDULED', 'RETRYING');
