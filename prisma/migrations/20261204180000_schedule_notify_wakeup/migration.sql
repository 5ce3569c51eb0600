-- A statement that writes schedules (created, edited, paused, resumed,
-- deleted, or moved on by the scheduler) signals the schedulers at its
-- commit. A scheduler sleeps until the next occurrence it knows of
-- (apps/scheduler/src/loops/schedule-firing.ts) instead of looking ten times
-- a second, so a change that brings an occurrence nearer must wake it.
-- Identical notifications of one transaction fold into one. Prisma's schema
-- cannot express triggers.
CREATE FUNCTION tasklane_schedules_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('tasklane_schedules', '');
  RETURN NULL;
END $$;

CREATE TRIGGER schedules_notify AFTER INSERT OR UPDATE ON "schedules"
  FOR EACH STATEMENT EXECUTE FUNCTION tasklane_schedules_notify();
