/**
 * Operator inputs (contract: TenantLimitsInput, CreateTenantInput). A limit
 * omitted or null is left as it is (the default on create); `removeLimits`
 * takes one away, leaving the tenant without that kind of limit.
 */
import { z } from "zod";
import { TenantLimit } from "../statuses.js";
import { nonBlankString } from "./common.js";

const optionalCount = z.number().int().min(0).nullish();

/** Each removable limit and the field that sets it. */
const TENANT_LIMIT_FIELDS = {
  [TenantLimit.MAX_CONCURRENCY]: "maxConcurrency",
  [TenantLimit.MAX_PENDING_TASKS]: "maxPendingTasks",
  [TenantLimit.DAILY_TASK_QUOTA]: "dailyTaskQuota",
} as const;

export const tenantLimitsInputSchema = z
  .object({
    weight: z.number().int().min(1).max(1000).nullish(),
    maxConcurrency: optionalCount,
    apiRatePerSecond: z.number().gt(0).max(1_000_000).nullish(),
    apiBurst: z.number().int().min(1).nullish(),
    maxPendingTasks: optionalCount,
    dailyTaskQuota: optionalCount,
    removeLimits: z.array(z.enum(TenantLimit)).max(Object.keys(TenantLimit).length).nullish(),
  })
  .superRefine((input, ctx) => {
    for (const limit of new Set(input.removeLimits ?? [])) {
      const field = TENANT_LIMIT_FIELDS[limit];
      if (input[field] != null) ctx.addIssue({ code: "custom", path: ["removeLimits"], message: `cannot set ${field} and remove it at once` });
    }
  });
export type TenantLimitsInput = z.output<typeof tenantLimitsInputSchema>;

export const createTenantInputSchema = z.object({
  name: nonBlankString(200),
  limits: tenantLimitsInputSchema.nullish(),
});
export type CreateTenantInput = z.output<typeof createTenantInputSchema>;
