/**
 * Queue configuration inputs (contract: RateLimitInput, UpsertQueueInput).
 */
import { z } from "zod";
import { QueueLimit, QueueMode } from "../statuses.js";
import { httpUrlSchema, queueNameSchema } from "./common.js";

export const rateLimitInputSchema = z.object({
  perSecond: z.number().gt(0).max(100_000),
  burst: z.number().int().min(1).max(1_000_000).nullish(),
});
export type RateLimitInput = z.output<typeof rateLimitInputSchema>;

export const upsertQueueInputSchema = z
  .object({
    name: queueNameSchema,
    mode: z.enum(QueueMode),
    endpointUrl: httpUrlSchema.nullish(),
    concurrency: z.number().int().min(1).max(100_000).nullish(),
    rateLimit: rateLimitInputSchema.nullish(),
    paused: z.boolean().nullish(),
    removeLimits: z.array(z.enum(QueueLimit)).max(Object.keys(QueueLimit).length).nullish(),
  })
  .superRefine((input, ctx) => {
    const removed = new Set(input.removeLimits ?? []);
    if (removed.has(QueueLimit.CONCURRENCY) && input.concurrency != null) {
      ctx.addIssue({ code: "custom", path: ["removeLimits"], message: "cannot set concurrency and remove it at once" });
    }
    if (removed.has(QueueLimit.RATE_LIMIT) && input.rateLimit != null) {
      ctx.addIssue({ code: "custom", path: ["removeLimits"], message: "cannot set rateLimit and remove it at once" });
    }
    // A PULL queue with a target would suggest we POST to it when we never
    // will. A PUSH queue needs one too, but an omitted endpointUrl keeps an
    // existing PUSH queue's: only the gateway, which reads the queue, can tell
    // a creation or a switch to PUSH (where it is required) from an update.
    if (input.mode === QueueMode.PULL && input.endpointUrl != null) {
      ctx.addIssue({ code: "custom", path: ["endpointUrl"], message: "must not be set for a PULL queue" });
    }
  });
export type UpsertQueueInput = z.output<typeof upsertQueueInputSchema>;
