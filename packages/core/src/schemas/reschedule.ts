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
 * decides whether a task is due). A runAt in the past is now as well: storage
 * never sets a time before its own now.
 */
export function requestedRunAt(time: RescheduleTime, nowMs: number): Date | null {
  if (time.runAt == null && time.delaySeconds == null) return null;
  return new Date(resolveRunAtMs(time, nowMs));
}
