/**
 * Operator inputs (contract: TenantLimitsInput, CreateTenantInput). Null on a
 * nullable limit means "no limit"; omitted means "leave / default".
 */
import { z } from "zod";
import { nonBlankString } from "./common.js";

const optionalCount = z.number().int().min(0).nullish();

export const tenantLimitsInputSchema = z.object({
  weight: z.number().int().min(1).max(1000).nullish(),
  maxConcurrency: optionalCount,
  apiRatePerSecond: z.number().gt(0).max(1_000_000).nullish(),
  apiBurst: z.number().int().min(1).nullish(),
  maxPendingTasks: optionalCount,
  dailyTaskQuota: optionalCount,
});
export type TenantLimitsInput = z.output<typeof tenantLimitsInputSchema>;

export const createTenantInputSchema = z.object({
  name: nonBlankString(200),
  limits: tenantLimitsInputSchema.nullish(),
});
export type CreateTenantInput = z.output<typeof createTenantInputSchema>;
