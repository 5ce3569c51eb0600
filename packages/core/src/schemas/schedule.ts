/**
 * Schedule inputs (contract: TaskTemplateInput, CreateScheduleInput,
 * UpdateScheduleInput). The cron expression and the time zone are checked by
 * the cron module itself, so the API and the scheduler can never disagree on
 * what a valid schedule is.
 */
import { z } from "zod";
import { canonicalTimezone } from "../cron/canonical-timezone.js";
import { cronExpressionProblem, timezoneProblem, validateCron } from "../cron/cron-expression.js";
import { MAX_MAX_ATTEMPTS, MAX_PAYLOAD_BYTES, MAX_TIMEOUT_SECONDS, MAX_TYPE_LENGTH } from "../limits.js";
import { MisfirePolicy, OverlapPolicy, Priority } from "../statuses.js";
import { boundedJson, nonBlankString, queueNameSchema } from "./common.js";
import { backoffInputSchema } from "./task.js";

/** Time zone of a schedule created without one. */
export const DEFAULT_SCHEDULE_TIMEZONE = "UTC";

/** The task each occurrence materialises: the SubmitTaskInput fields that make sense for every run. */
export const taskTemplateInputSchema = z.object({
  type: nonBlankString(MAX_TYPE_LENGTH),
  queue: queueNameSchema.nullish(),
  payload: boundedJson(MAX_PAYLOAD_BYTES).nullish(),
  priority: z.enum(Priority).nullish(),
  maxAttempts: z.number().int().min(1).max(MAX_MAX_ATTEMPTS).nullish(),
  backoff: backoffInputSchema.nullish(),
  timeoutSeconds: z.number().int().min(1).max(MAX_TIMEOUT_SECONDS).nullish(),
});
export type TaskTemplateInput = z.output<typeof taskTemplateInputSchema>;

/** A cron expression (5 fields, or 6 with seconds) that cron-expression.ts accepts. */
export const cronSchema = z.string().superRefine((value, ctx) => {
  const problem = cronExpressionProblem(value);
  if (problem !== null) ctx.addIssue({ code: "custom", message: problem });
});

/** An IANA time zone name, in the database's own case whatever the case typed (`europe/london` is `Europe/London`). */
export const timezoneSchema = z
  .string()
  .superRefine((value, ctx) => {
    const problem = timezoneProblem(value);
    if (problem !== null) ctx.addIssue({ code: "custom", message: problem });
  })
  .transform(canonicalTimezone);

export const createScheduleInputSchema = z.object({
  name: nonBlankString(200),
  cron: cronSchema,
  timezone: timezoneSchema.nullish().transform((v) => v ?? DEFAULT_SCHEDULE_TIMEZONE),
  task: taskTemplateInputSchema,
  misfirePolicy: z.enum(MisfirePolicy).nullish(),
  overlapPolicy: z.enum(OverlapPolicy).nullish(),
  enabled: z.boolean().nullish(),
});
export type CreateScheduleInput = z.output<typeof createScheduleInputSchema>;

/**
 * Null or omitted means "leave as is". A given cron or timezone is checked
 * on its own here; the service merges it with the stored other half and
 * checks the pair with validateCronPair before writing.
 */
export const updateScheduleInputSchema = z.object({
  cron: cronSchema.nullish(),
  timezone: timezoneSchema.nullish(),
  task: taskTemplateInputSchema.nullish(),
  misfirePolicy: z.enum(MisfirePolicy).nullish(),
  overlapPolicy: z.enum(OverlapPolicy).nullish(),
  enabled: z.boolean().nullish(),
});
export type UpdateScheduleInput = z.output<typeof updateScheduleInputSchema>;

/**
 * The (cron, timezone) pair a schedule will run with — after an update, the
 * given half merged with the stored one. Throws BadUserInputError with
 * fieldErrors on "cron" / "timezone"; returns the pair for chaining.
 * (Today either half's validity does not depend on the other, so this
 * re-checks what the schemas checked; it stays the one call that guards the
 * pair in case that ever changes, e.g. a stored zone since removed from tzdata.)
 */
export function validateCronPair(cron: string, timezone: string): { cron: string; timezone: string } {
  validateCron(cron, timezone);
  return { cron, timezone };
}
