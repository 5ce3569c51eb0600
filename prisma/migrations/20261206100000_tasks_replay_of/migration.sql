-- replayTask: the task a replay was made from (null for every other task).
-- Nullable without a default, so adding it rewrites no row and writing it
-- costs submissions nothing (an empty array in the insert's unnest pads to
-- NULL). No index: only Task.replayOf reads it, by task id. No foreign key:
-- the original may be pruned by retention or deleted with its queue while the
-- replay stays, and a key would give every task insert a trigger to fire.
-- AlterTable
ALTER TABLE "tasks" ADD COLUMN     "replay_of" TEXT;
