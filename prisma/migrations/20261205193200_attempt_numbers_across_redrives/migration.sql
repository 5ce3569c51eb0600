-- Attempt numbers go on across redrives. A redrive gives a DEAD task a fresh
-- budget (attempts back to 0, checked against max_attempts), and the next
-- attempt was numbered 1 again, so a task's history read 1, 2, 3, 1, 2, 3 and
-- its events named two attempts 1. attempts_before_redrive keeps what the
-- redrives took off attempts; an attempt's number, an event's attempt and a
-- PUSH request's "attempt" are attempts_before_redrive + attempts.
-- Tasks redriven before this keep the numbers they have (their earlier
-- attempts are not counted here), and number on from their current budget.
-- A constant default: no table rewrite.

-- AlterTable
ALTER TABLE "tasks" ADD COLUMN "attempts_before_redrive" INTEGER NOT NULL DEFAULT 0;
