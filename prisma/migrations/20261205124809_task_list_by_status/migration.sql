-- (tenant_id, id DESC) served the unfiltered task list alone, and took an
-- entry on each of a task's three row versions (a status change is never a
-- HOT update): ~7% of what a task costs Postgres on the hot path (pg-hot-path,
-- three alternations: 119.5 / 123.5 / 123.0 µs a task without it against
-- 125.5 / 133.0 / 135.5). listTasks now reads (tenant_id, status, id DESC) one
-- status at a time from its cursor and merges the ranges by id.

-- DropIndex
DROP INDEX "tasks_tenant_id_id_idx";
