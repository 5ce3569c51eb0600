/**
 * rescheduleTask's new time (contract addition): runAt or delaySeconds, at
 * most one, with submission's bounds (schemas/task.ts); neither means now.
 */
import { z } from "zod";
import { resolveRunAtMs } from "./task-spec.js";
import { delaySecondsSchema, refuseBothRunAtAndDelay, runAtSchema } from "./task.js";

export const rescheduleTimeSchema = z
  .object({
    runAt: runAtSchema.nullish(),
    delaySeconds: delaySecondsSchema.nullish(),
  })
  .superRefine(refuseBothRunAtAndDelay);
export type RescheduleTime = z.output<typeof rescheduleTimeSchema>;

/**
 * The runAt a parsed RescheduleTime asks for, `nowMs` being the call's time;
 * null for "now", which storage reads on the database's clock (the one that
 * decides whether a task is due). A runAt in the past and a delay of 0 are
 * now as well: as this process's time they could read as a moment ahead of
 * the database's (clock skew) and leave a "run now" SCHEDULED, and storage
 * keeps the runAt of a task already due for "now" (its place in line).
 */
export function requestedRunAt(time: RescheduleTime, nowMs: number): Date | null {
  if (time.runAt == null && time.delaySeconds == null) return null;
  const ms = resolveRunAtMs(time, nowMs);
  return ms <= nowMs ? null : new Date(ms);
}
