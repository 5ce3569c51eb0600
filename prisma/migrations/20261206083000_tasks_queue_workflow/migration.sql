-- deleteQueue refuses a queue holding tasks of a RUNNING workflow
-- (packages/db/src/queues/delete-queue.ts). With no index leading with
-- queue_id, that look walked every workflow task of every tenant through
-- (workflow_id, workflow_key) for each deletion, twice (once under the queue's
-- lock): 300,000 index entries and 65 ms with 100,000 running workflows. This
-- index holds workflow tasks only, by queue, so the look reads the queue's own
-- workflow tasks. CONCURRENTLY, in a migration of its own, so the table keeps
-- taking writes while it is built (docs/operations.md, Upgrades and migrations).
CREATE INDEX CONCURRENTLY "tasks_queue_workflow_idx" ON "tasks" ("queue_id", "workflow_id") WHERE "workflow_id" IS NOT NULL;
