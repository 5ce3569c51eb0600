-- The full (status, run_at) index on tasks took an entry for each of a task's
-- row versions (three for a task that runs at once; no status change is HOT).
-- Its readers each want a few statuses: promoting SCHEDULED and RETRYING tasks
-- when due, and the retention walk over finished tasks. The scheduler's queue
-- depth gauges, its third reader, now read queue_counters and the waiting
-- tasks' lanes. Two partial indexes take their place: a task that runs at
-- once writes a single entry, when it finishes.

-- DropIndex
DROP INDEX "tasks_status_run_at_idx";

-- Prisma's schema cannot express partial indexes.
CREATE INDEX "tasks_due_later_idx" ON "tasks" ("run_at") WHERE status IN ('SCHEDULED', 'RETRYING');
CREATE INDEX "tasks_finished_run_at_idx" ON "tasks" ("run_at") WHERE status IN ('SUCCEEDED', 'DEAD', 'CANCELLED', 'SKIPPED');
