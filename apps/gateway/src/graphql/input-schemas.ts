/**
 * zod schemas for arguments that core has no schema for (gateway-only
 * operations). Everything else is parsed with core's schemas.
 */
import { nonBlankString, queueNameSchema } from "@tasklane/core";
import { z } from "zod";
import { API_KEY_SCOPES, ApiKeyScope } from "../auth/scopes.js";

/** Ids are checked for shape by the services (a malformed id is simply NOT_FOUND). */
export const idArgSchema = z.string().min(1).max(200);

export const queueNameArgSchema = queueNameSchema;

export const createApiKeyArgsSchema = z.object({
  name: nonBlankString(200),
  // Omitted: a "full" key, like the one createTenant issues.
  scopes: z
    .array(z.enum(API_KEY_SCOPES as [ApiKeyScope, ...ApiKeyScope[]]))
    .min(1)
    .max(API_KEY_SCOPES.length)
    .nullish()
    .transform((s) => [...new Set(s ?? [ApiKeyScope.full])]),
});
