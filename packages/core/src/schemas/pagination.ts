/**
 * Cursor pagination arguments (`first`, `after`) of the list queries, one
 * schema per kind of cursor. A cursor that is not one of ours is
 * BAD_USER_INPUT: read as "from the start" it would repeat pages forever, and
 * read as "past the end" it would look like the end of a list that goes on.
 */
import { z } from "zod";
import { isWellFormedId } from "../ids.js";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../limits.js";

/** A task list's cursor: the last task's id, base64url, so clients treat it as opaque. */
export const taskCursor = {
  encode: (taskId: string): string => Buffer.from(taskId, "utf8").toString("base64url"),
  /** The task id, or null when `cursor` is not one this API handed out. */
  decode(cursor: string): string | null {
    const id = Buffer.from(cursor, "base64url").toString("utf8");
    return isWellFormedId("task", id) && taskCursor.encode(id) === cursor ? id : null;
  },
};

/**
 * The dead-letter list's cursor: when the previous page's last task died (its
 * completedAt, in ms, the column's precision) and its id, base64url. The list
 * is ordered by time of death, and a task's id alone would not say where it
 * stood once it had been redriven (or had died again).
 */
export const deadLetterCursor = {
  encode: (completedAt: Date, taskId: string): string => Buffer.from(`${completedAt.getTime()}.${taskId}`, "utf8").toString("base64url"),
  /** The position, or null when `cursor` is not one this API handed out. */
  decode(cursor: string): { completedAt: Date; taskId: string } | null {
    const match = /^(0|[1-9]\d{0,15})\.(.+)$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
    if (!match) return null;
    const completedAt = new Date(Number(match[1]));
    const taskId = match[2] as string;
    if (Number.isNaN(completedAt.getTime()) || !isWellFormedId("task", taskId)) return null;
    return deadLetterCursor.encode(completedAt, taskId) === cursor ? { completedAt, taskId } : null;
  },
};

const MAX_EVENT_ID = 9_223_372_036_854_775_807n; // task_events.id is a Postgres bigint

/** An audit event's id: the `after` of Task.events. */
export function isEventId(cursor: string): boolean {
  return /^(0|[1-9]\d{0,18})$/.test(cursor) && BigInt(cursor) <= MAX_EVENT_ID;
}

const first = z
  .number()
  .int()
  .min(1)
  .max(MAX_PAGE_SIZE)
  .nullish()
  .transform((v) => v ?? DEFAULT_PAGE_SIZE);

function pageSchema(isCursor: (cursor: string) => boolean, what: string) {
  return z.object({
    first,
    after: z
      .string()
      .max(200)
      .refine(isCursor, `not ${what}`)
      .nullish()
      .transform((v) => v ?? null),
  });
}

/** `tasks`: `after` is a previous page's endCursor. */
export const taskPageSchema = pageSchema((c) => taskCursor.decode(c) !== null, "a cursor this API returned as endCursor");
/** `deadLetterTasks`: `after` is a previous page's endCursor (of that list: a `tasks` cursor is refused). */
export const deadLetterPageSchema = pageSchema((c) => deadLetterCursor.decode(c) !== null, "a cursor this API returned as endCursor");
/** Task.events: `after` is an event id. */
export const auditPageSchema = pageSchema(isEventId, "an event id");
/** `workflows` (a plain list): `after` is the id of the previous page's last workflow. */
export const workflowPageSchema = pageSchema((c) => isWellFormedId("wf", c), "a workflow id");
