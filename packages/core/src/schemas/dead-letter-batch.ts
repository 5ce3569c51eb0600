/**
 * Arguments of the bulk dead-letter mutations (redriveDeadLetterTasks,
 * discardDeadLetterTasks), shared by the gateway and the SDK. Its own module,
 * imported by path (`@tasklane/core/schemas/dead-letter-batch`).
 */
import { z } from "zod";
import { queueNameSchema } from "./common.js";

/** Tasks one call changes when `max` is left out. @defaultValue 1000 */
export const DEFAULT_DEAD_LETTER_BATCH = 1_000;
/** The most one call may change: a client loops while the answer says hasMore. @defaultValue 10000 */
export const MAX_DEAD_LETTER_BATCH = 10_000;

export const deadLetterBatchArgsSchema = z.object({
  /** Only this queue's dead tasks; null or left out: every queue. */
  queue: queueNameSchema.nullish().transform((v) => v ?? null),
  max: z
    .number()
    .int()
    .min(1)
    .max(MAX_DEAD_LETTER_BATCH)
    .nullish()
    .transform((v) => v ?? DEFAULT_DEAD_LETTER_BATCH),
});

export type DeadLetterBatchArgs = z.output<typeof deadLetterBatchArgsSchema>;
