/**
 * Webhook endpoint inputs (contract: CreateWebhookInput; UpdateWebhookInput) and the
 * webhookDeliveries page size.
 */
import { z } from "zod";
import { ALL_EVENTS_FILTER, EVENT_TYPES } from "../event-envelope.js";
import { MAX_PAGE_SIZE } from "../limits.js";
import { httpUrlSchema } from "./common.js";

const FILTERS: ReadonlySet<string> = new Set<string>([ALL_EVENTS_FILTER, ...EVENT_TYPES]);

export const webhookEventFilterSchema = z
  .string()
  .refine((s) => FILTERS.has(s), { message: `must be one of ${[...FILTERS].map((f) => `"${f}"`).join(", ")}` });

export const webhookEventsSchema = z
  .array(webhookEventFilterSchema)
  .min(1, { message: "must name at least one event type (or \"*\")" })
  .max(FILTERS.size * 2)
  // Stored once each, in a stable order, so the API echoes what the filter means.
  .transform((events) => [...new Set(events)].sort());

export const createWebhookInputSchema = z.object({
  // Syntax only here; the SSRF policy (addresses, DNS) is applied at the edge.
  url: httpUrlSchema,
  events: webhookEventsSchema,
});
export type CreateWebhookInput = z.output<typeof createWebhookInputSchema>;

/**
 * Null or omitted means "leave as is". `enabled: true` on a disabled endpoint
 * also clears its disable reason and failure streak (the service does that).
 */
export const updateWebhookInputSchema = z.object({
  url: httpUrlSchema.nullish(),
  events: webhookEventsSchema.nullish(),
  enabled: z.boolean().nullish(),
});
export type UpdateWebhookInput = z.output<typeof updateWebhookInputSchema>;

/** webhookDeliveries(first): newest first, 20 unless asked. */
export const webhookDeliveriesFirstSchema = z
  .number()
  .int()
  .min(1)
  .max(MAX_PAGE_SIZE)
  .nullish()
  .transform((v) => v ?? 20);
