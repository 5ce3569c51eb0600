-- DropForeignKey
ALTER TABLE "task_attempts" DROP CONSTRAINT "task_attempts_task_id_fkey";

-- DropForeignKey
ALTER TABLE "task_events" DROP CONSTRAINT "task_events_task_id_fkey";

-- The cascade the two keys gave, kept: a task's attempts and events go with
-- it, whoever deletes it (a queue or tenant deleted by hand cascades into
-- tasks). One statement-level trigger instead of a key check on each of the
-- four child rows every task writes. Retention deletes the children itself
-- (it reports their counts); the trigger then finds nothing left.
CREATE FUNCTION tasklane_delete_task_children() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM task_events e USING old_tasks o WHERE e.task_id = o.id;
  DELETE FROM task_attempts a USING old_tasks o WHERE a.task_id = o.id;
  RETURN NULL;
END $$;

CREATE FUNCTION tasklane_truncate_task_children() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  TRUNCATE task_events, task_attempts;
  RETURN NULL;
END $$;

CREATE TRIGGER tasks_delete_children AFTER DELETE ON "tasks" REFERENCING OLD TABLE AS old_tasks
  FOR EACH STATEMENT EXECUTE FUNCTION tasklane_delete_task_children();
CREATE TRIGGER tasks_truncate_children AFTER TRUNCATE ON "tasks"
  FOR EACH STATEMENT EXECUTE FUNCTION tasklane_truncate_task_children();
