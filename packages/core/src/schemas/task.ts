/**
 * Inputs that create or filter tasks (contract: BackoffInput, SubmitTaskInput, TaskFilter).
 */
import { z } from "zod";
import {
  MAX_BACKOFF_SECONDS,
  MAX_BATCH_SIZE,
  MAX_DELAY_SECONDS,
  MAX_KEY_LENGTH,
  MAX_MAX_ATTEMPTS,
  MAX_METADATA_BYTES,
  MAX_PAYLOAD_BYTES,
  MAX_TIMEOUT_SECONDS,
  MAX_TYPE_LENGTH,
} from "../limits.js";
import { BackoffStrategy, Priority, TaskStatus } from "../statuses.js";
import { boundedJson, httpUrlSchema, nonBlankString, queueNameSchema } from "./common.js";

export const backoffInputSchema = z.object({
  strategy: z.enum(BackoffStrategy),
  delaySeconds: z.number().min(0).max(MAX_BACKOFF_SECONDS),
  maxDelaySeconds: z.number().min(0).max(MAX_BACKOFF_SECONDS).nullish(),
  jitter: z.boolean().nullish(),
});
export type BackoffInput = z.output<typeof backoffInputSchema>;

const keySchema = z.string().min(1).max(MAX_KEY_LENGTH);

/**
 * When a task runs, as submission and rescheduleTask take it (with
 * delaySeconds its alternative). Read against the wall clock at validation
 * time: a year ahead is a limit on how long we keep rows around, not a
 * precise contract. A time in the past means now (resolveRunAtMs).
 */
export const runAtSchema = z.date().refine((d) => d.getTime() <= Date.now() + MAX_DELAY_SECONDS * 1000, {
  message: `must not be more than ${MAX_DELAY_SECONDS} seconds ahead`,
});
export const delaySecondsSchema = z.number().min(0).max(MAX_DELAY_SECONDS);

/** The refusal of an input naming both runAt and delaySeconds (superRefine). */
export function refuseBothRunAtAndDelay(input: { runAt?: Date | null; delaySeconds?: number | null }, ctx: z.RefinementCtx): void {
  if (input.runAt != null && input.delaySeconds != null) {
    ctx.addIssue({ code: "custom", path: ["delaySeconds"], message: "runAt and delaySeconds are mutually exclusive" });
  }
}

export const submitTaskInputSchema = z
  .object({
    type: nonBlankString(MAX_TYPE_LENGTH),
    queue: queueNameSchema.nullish(),
    payload: boundedJson(MAX_PAYLOAD_BYTES).nullish(),
    priority: z.enum(Priority).nullish(),
    runAt: runAtSchema.nullish(),
    delaySeconds: delaySecondsSchema.nullish(),
    maxAttempts: z.number().int().min(1).max(MAX_MAX_ATTEMPTS).nullish(),
    backoff: backoffInputSchema.nullish(),
    timeoutSeconds: z.number().int().min(1).max(MAX_TIMEOUT_SECONDS).nullish(),
    idempotencyKey: keySchema.nullish(),
    orderingKey: keySchema.nullish(),
    callbackUrl: httpUrlSchema.nullish(),
    metadata: boundedJson(MAX_METADATA_BYTES).nullish(),
  })
  .superRefine(refuseBothRunAtAndDelay);
export type SubmitTaskInput = z.output<typeof submitTaskInputSchema>;

/** submitTasks: all or nothing, so the whole batch is validated before anything is written. */
export const submitTasksInputSchema = z.array(submitTaskInputSchema).max(MAX_BATCH_SIZE);

const idFilter = z.string().min(1).max(200);

export const taskFilterSchema = z.object({
  status: z.array(z.enum(TaskStatus)).max(Object.keys(TaskStatus).length * 2).nullish(),
  type: nonBlankString(MAX_TYPE_LENGTH).nullish(),
  queue: queueNameSchema.nullish(),
  // Not checked against the id format: a malformed id simply matches nothing.
  workflowId: idFilter.nullish(),
  scheduleId: idFilter.nullish(),
  createdAfter: z.date().nullish(),
  createdBefore: z.date().nullish(),
});
export type TaskFilter = z.output<typeof taskFilterSchema>;
