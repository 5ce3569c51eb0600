-- The reconciler's sweep walks the tasks that belong in Redis in id order
-- (keyset pages). Through the primary key that walk also reads every finished
-- task kept for the retention period, so its cost grew with history instead
-- of with the backlog. This index holds only tasks waiting to run: a task
-- enters it once when written and leaves it when it starts.
CREATE INDEX "tasks_waiting_id_idx" ON "tasks"("id")
  WHERE "status" IN ('QUEUED', 'SCHEDULED', 'RETRYING');
