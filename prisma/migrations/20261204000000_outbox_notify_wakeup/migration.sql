-- A statement that writes NOTIFY outbox rows (a task or workflow reached an
-- end someone is to be told of) signals the notifiers at its commit, so they
-- fan the rows out to webhook deliveries at once instead of at their next
-- poll (notifications are delivered only on commit, and only to sessions
-- LISTENing: packages/db/src/notifications/outbox-wakeups.ts). Statements
-- without such rows only pay the trigger's call (~1 µs per task over a
-- 60-task completion, test/bench pg-hot-path); identical notifications of one
-- transaction fold into one. Prisma's schema cannot express triggers.
CREATE FUNCTION tasklane_outbox_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM new_outbox WHERE kind = 'NOTIFY') THEN
    PERFORM pg_notify('tasklane_outbox', '');
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER outbox_notify AFTER INSERT ON "outbox" REFERENCING NEW TABLE AS new_outbox
  FOR EACH STATEMENT EXECUTE FUNCTION tasklane_outbox_notify();
