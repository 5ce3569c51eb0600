-- A schedule's overlap policy looks at its unfinished runs whenever an
-- occurrence fires (packages/db/src/schedules: SKIP's previous-run look,
-- CANCEL_RUNNING's cancel). Through (schedule_id, run_at DESC) both read every
-- run of the schedule kept for the retention period (86,400 a day for a
-- per-second schedule) whenever nothing was unfinished. This index holds only
-- a schedule's unfinished runs: a run enters it when written and leaves it when
-- it finishes. CONCURRENTLY, in a migration of its own, so the table keeps
-- taking writes while it is built (docs/operations.md, Upgrades and migrations).
CREATE INDEX CONCURRENTLY "tasks_schedule_unfinished_idx" ON "tasks" ("schedule_id") WHERE "schedule_id" IS NOT NULL AND "status" IN ('SCHEDULED', 'BLOCKED', 'QUEUED', 'RUNNING', 'RETRYING');
