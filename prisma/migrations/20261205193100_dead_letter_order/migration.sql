-- deadLetterTasks lists a tenant's DEAD tasks by when they died, the last
-- first (completed_at DESC, id DESC), a page at a time from a keyset cursor
-- on that pair (packages/db/src/tasks/list-dead-tasks.ts). It had read them
-- by id, which is creation order, so a task created long ago that died a
-- minute ago was pages down. Partial: only DEAD row versions take an entry, so
-- a task that never dies costs this index nothing. CONCURRENTLY, in a
-- migration of its own, so a big tasks table keeps taking writes while it is
-- built (docs/operations.md, Upgrades and migrations).
CREATE INDEX CONCURRENTLY "tasks_dead_letter_idx" ON "tasks" ("tenant_id", "completed_at" DESC, "id" DESC) WHERE status = 'DEAD';
